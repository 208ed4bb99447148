import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import {
  InvalidTaskEnvelope,
  TASK_CAPS,
  TASK_DEFAULTS,
  TaskPayloadTooLarge,
  TaskQueueDepthExceeded,
  checkQueueDepth,
  createEnvelope,
  newTaskId,
  parseEnvelope,
  type TaskEnvelope,
} from '../../../src/bus/index.js';

const clock = new SimulatedClock(0, Date.UTC(2026, 5, 1, 12, 0, 0));

/** The RFC 9562 layout of a UUIDv7: 48-bit ms timestamp, version 7, 12 bits, variant 10, 62 bits. */
function uuid7Fields(id: string): { ms: number; version: number; variant: number } {
  const hex = id.replaceAll('-', '');
  return { ms: Number.parseInt(hex.slice(0, 12), 16), version: Number.parseInt(hex[12]!, 16), variant: Number.parseInt(hex[16]!, 16) >> 2 };
}

describe('task envelope (S7-1)', () => {
  it('has exactly the S7-1 fields, with the defaults', () => {
    const envelope = createEnvelope({ name: 'billing.charge' }, { clock });
    expect(Object.keys(envelope).sort()).toEqual(
      ['id', 'name', 'payload', 'attempts', 'max_retries', 'run_at', 'timeout_soft_ms', 'timeout_hard_ms', 'idempotency_key', 'enqueued_at'].sort(),
    );
    expect(envelope).toMatchObject({
      name: 'billing.charge',
      payload: {},
      attempts: 0,
      max_retries: 5,
      run_at: null,
      timeout_soft_ms: 30_000,
      timeout_hard_ms: 60_000,
      idempotency_key: null,
      enqueued_at: '2026-06-01T12:00:00.000Z',
    });
    expect(TASK_DEFAULTS).toMatchObject({ maxRetries: 5, timeoutSoftMs: 30_000, timeoutHardMs: 60_000, leaseMs: 60_000, heartbeatMs: 15_000 });
    expect(TASK_CAPS).toMatchObject({ maxPayloadBytes: 1_048_576, maxQueueDepth: 100_000 });
    expect(Object.isFrozen(envelope)).toBe(true);
  });

  it('ids are UUIDv7 in the RFC 9562 layout, stamped with the clock, strictly increasing', () => {
    const local = new SimulatedClock(0, Date.UTC(2026, 0, 2));
    const ids: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      ids.push(newTaskId(local));
      if (i % 500 === 0) local.advance(7);
    }
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const fields = uuid7Fields(id);
      expect(fields.version).toBe(7);
      expect(fields.variant).toBe(0b10);
      expect(fields.ms).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 2));
      expect(fields.ms).toBeLessThanOrEqual(Date.UTC(2026, 0, 2) + 28);
    }
    expect(uuid7Fields(ids[0]!).ms).toBe(Date.UTC(2026, 0, 2));
    expect(uuid7Fields(ids.at(-1)!).ms).toBe(Date.UTC(2026, 0, 2) + 28);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('normalises run_at and keeps the caller’s settings', () => {
    const envelope = createEnvelope(
      { name: 'mail.send', payload: { to: 'a@b' }, runAt: Date.UTC(2026, 6, 1), maxRetries: 0, timeoutSoftMs: 5, timeoutHardMs: 10, idempotencyKey: 'k1' },
      { clock },
    );
    expect(envelope).toMatchObject({ run_at: '2026-07-01T00:00:00.000Z', max_retries: 0, timeout_soft_ms: 5, timeout_hard_ms: 10, idempotency_key: 'k1' });
    expect(createEnvelope({ name: 'x', runAt: '2026-07-01T02:00:00+02:00' }, { clock }).run_at).toBe('2026-07-01T00:00:00.000Z');
    // A soft timeout past the default hard one raises the hard default with it.
    expect(createEnvelope({ name: 'x', timeoutSoftMs: 90_000 }, { clock }).timeout_hard_ms).toBe(90_000);
  });

  it('round-trips through JSON and parseEnvelope', () => {
    const envelope = createEnvelope({ name: 'a.b', payload: [1, 'two', { three: null }], idempotencyKey: 'x' }, { clock });
    expect(parseEnvelope(JSON.stringify(envelope))).toEqual(envelope);
    expect(parseEnvelope(JSON.parse(JSON.stringify(envelope)) as unknown)).toEqual(envelope);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['no name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name with spaces', { name: 'a b' }, 'name'],
    ['name too long', { name: 'a'.repeat(256) }, 'name'],
    ['negative retries', { name: 'a', maxRetries: -1 }, 'max_retries'],
    ['retries over cap', { name: 'a', maxRetries: 101 }, 'max_retries'],
    ['fractional retries', { name: 'a', maxRetries: 1.5 }, 'max_retries'],
    ['zero soft timeout', { name: 'a', timeoutSoftMs: 0 }, 'timeout_soft_ms'],
    ['soft timeout over 24 h', { name: 'a', timeoutSoftMs: 86_400_001 }, 'timeout_soft_ms'],
    ['hard under soft', { name: 'a', timeoutSoftMs: 100, timeoutHardMs: 99 }, 'timeout_hard_ms'],
    ['bad run_at', { name: 'a', runAt: 'tomorrow' }, 'run_at'],
    ['NaN run_at', { name: 'a', runAt: Number.NaN }, 'run_at'],
    ['empty idempotency key', { name: 'a', idempotencyKey: '' }, 'idempotency_key'],
    ['long idempotency key', { name: 'a', idempotencyKey: 'k'.repeat(256) }, 'idempotency_key'],
    ['BigInt payload', { name: 'a', payload: 1n }, 'payload'],
    ['function payload', { name: 'a', payload: () => 1 }, 'payload'],
  ];
  it.each(bad)('refuses %s with InvalidTaskEnvelope naming the field', (_label, input, field) => {
    const attempt = (): TaskEnvelope => createEnvelope(input as never, { clock });
    expect(attempt).toThrow(InvalidTaskEnvelope);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidTaskEnvelope).code).toBe('TASK_INVALID_ENVELOPE');
      expect((error as InvalidTaskEnvelope).field).toBe(field);
    }
  });

  it('refuses a cyclic payload', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => createEnvelope({ name: 'a', payload: cyclic as never }, { clock })).toThrow(InvalidTaskEnvelope);
  });

  it('takes a payload of exactly 1 MiB of JSON and refuses one byte more, counting UTF-8 bytes', () => {
    // A JSON string adds two quote bytes.
    const exact = 'x'.repeat(TASK_CAPS.maxPayloadBytes - 2);
    expect(createEnvelope({ name: 'a', payload: exact }, { clock }).payload).toBe(exact);
    expect(() => createEnvelope({ name: 'a', payload: `${exact}x` }, { clock })).toThrow(TaskPayloadTooLarge);
    // 'é' is two UTF-8 bytes: half as many characters reach the cap.
    const wide = 'é'.repeat(TASK_CAPS.maxPayloadBytes / 2);
    try {
      createEnvelope({ name: 'a', payload: wide }, { clock });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TaskPayloadTooLarge);
      expect((error as TaskPayloadTooLarge).code).toBe('TASK_PAYLOAD_TOO_LARGE');
      expect((error as TaskPayloadTooLarge).sizeBytes).toBe(TASK_CAPS.maxPayloadBytes + 2);
      expect((error as TaskPayloadTooLarge).limitBytes).toBe(TASK_CAPS.maxPayloadBytes);
    }
    // A queue may set a lower cap, never a higher one.
    expect(() => createEnvelope({ name: 'a', payload: 'x'.repeat(100) }, { clock, maxPayloadBytes: 50 })).toThrow(TaskPayloadTooLarge);
    expect(() => createEnvelope({ name: 'a', payload: `${exact}x` }, { clock, maxPayloadBytes: 10 * 1024 * 1024 })).toThrow(TaskPayloadTooLarge);
  });

  it('parseEnvelope refuses what is not an envelope', () => {
    const good = JSON.parse(JSON.stringify(createEnvelope({ name: 'a' }, { clock }))) as Record<string, unknown>;
    const cases: [unknown, string][] = [
      ['{not json', 'json'],
      [[], 'envelope'],
      [{ ...good, extra: 1 }, 'extra'],
      [{ ...good, id: 'not-a-uuid' }, 'id'],
      [{ ...good, id: '0190a0a0-0000-4000-8000-000000000000' }, 'id'],
      [{ ...good, attempts: 7 }, 'attempts'],
      [{ ...good, attempts: -1 }, 'attempts'],
      [{ ...good, enqueued_at: 'x' }, 'enqueued_at'],
      [{ ...good, run_at: 5 }, 'run_at'],
      [Object.fromEntries(Object.entries(good).filter(([key]) => key !== 'payload')), 'payload'],
    ];
    for (const [raw, field] of cases) {
      expect(() => parseEnvelope(raw), field).toThrow(InvalidTaskEnvelope);
      try {
        parseEnvelope(raw);
      } catch (error) {
        expect((error as InvalidTaskEnvelope).field).toBe(field);
      }
    }
    // One failure past max_retries is allowed: that failure dead-lettered it.
    expect(parseEnvelope({ ...good, attempts: 6 }).attempts).toBe(6);
  });

  it('any valid input gives an envelope that parses back equal (property)', () => {
    const input = fc.record(
      {
        name: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,40}$/),
        payload: fc.jsonValue({ maxDepth: 3 }),
        maxRetries: fc.integer({ min: 0, max: 100 }),
        runAt: fc.option(fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }), { nil: null }),
        timeoutSoftMs: fc.integer({ min: 1, max: 86_400_000 }),
        idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 255 }), { nil: null }),
      },
      { requiredKeys: ['name'] },
    );
    fc.assert(
      fc.property(input, (raw) => {
        const envelope = createEnvelope(raw as never, { clock });
        expect(parseEnvelope(JSON.stringify(envelope))).toEqual(JSON.parse(JSON.stringify(envelope)));
        expect(envelope.timeout_hard_ms).toBeGreaterThanOrEqual(envelope.timeout_soft_ms);
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});

describe('queue depth cap', () => {
  it('refuses the 100,001st envelope with TaskQueueDepthExceeded (not QueueFull)', () => {
    expect(() => checkQueueDepth('mail', 99_999)).not.toThrow();
    try {
      checkQueueDepth('mail', 100_000);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TaskQueueDepthExceeded);
      expect((error as TaskQueueDepthExceeded).code).toBe('TASK_QUEUE_DEPTH_EXCEEDED');
      expect((error as TaskQueueDepthExceeded).limit).toBe(100_000);
      expect((error as Error).message).toContain('maxDepth = 100000');
    }
    // A lower configured depth applies; a higher one is held to the cap.
    expect(() => checkQueueDepth('mail', 10, 10)).toThrow(TaskQueueDepthExceeded);
    expect(() => checkQueueDepth('mail', 100_000, 1_000_000)).toThrow(TaskQueueDepthExceeded);
  });
});

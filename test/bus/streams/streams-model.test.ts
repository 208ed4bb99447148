/**
 * fast-check (fixed seed, bounded runs): each store against a reference model under random
 * publishes, fetches, acks, naks, terms, inProgress, clock advances (deadline expiry on the
 * SimulatedClock) and retention passes. Every answer must match: sequences, delivery counts,
 * which settle calls fail, terminations and evictions.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { StreamAckUnknown, type StreamEvent } from '../../../src/bus/index.js';
import { STREAM_BACKENDS } from './stores.js';

const CONSUMERS = { c: { ackWaitMs: 1_000, maxDeliver: 3, maxAckPending: 4 }, d: { ackWaitMs: 500, maxDeliver: 2, maxAckPending: 100 } } as const;
type ConsumerName = keyof typeof CONSUMERS;
const STREAM = { maxAgeMs: 5_000, maxMsgs: 6 };

type Op =
  | { readonly kind: 'publish'; readonly count: number }
  | { readonly kind: 'fetch'; readonly consumer: ConsumerName; readonly batch: number }
  | { readonly kind: 'ack' | 'term' | 'inProgress'; readonly consumer: ConsumerName; readonly pick: number }
  | { readonly kind: 'nak'; readonly consumer: ConsumerName; readonly pick: number; readonly delayMs: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'retain' };

const consumer = fc.constantFrom<ConsumerName>('c', 'd');
const pick = fc.nat({ max: 50 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('publish' as const), count: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('fetch' as const), consumer, batch: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), consumer, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('term' as const, 'inProgress' as const), consumer, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nak' as const), consumer, pick, delayMs: fc.constantFrom(0, 300, 2_000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 1_500 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'retain' as const }) },
);

interface PendingEntry {
  deliveries: number;
  deadline: number;
}

/** The reference: plain maps and arrays, written as plainly as possible. */
class Model {
  now = 0;
  lastSeq = 0;
  readonly messages = new Map<number, number>(); // seq -> time
  readonly pending: Record<ConsumerName, Map<number, PendingEntry>> = { c: new Map(), d: new Map() };
  readonly nextSeq: Record<ConsumerName, number> = { c: 1, d: 1 };
  readonly events: StreamEvent[] = [];

  publish(): number {
    this.messages.set(++this.lastSeq, this.now);
    return this.lastSeq;
  }

  fetch(name: ConsumerName, batch: number): [number, number][] {
    const config = CONSUMERS[name];
    const pending = this.pending[name];
    const due = [...pending.entries()].filter(([, entry]) => entry.deadline <= this.now).sort(([a, x], [b, y]) => x.deadline - y.deadline || a - b).slice(0, batch);
    const taken: [number, number][] = [];
    for (const [seq, entry] of due) {
      if (entry.deliveries >= config.maxDeliver) {
        pending.delete(seq);
        this.events.push({ kind: 'terminated', stream: 's', consumer: name, seq, reason: 'maxDeliver', deliveries: entry.deliveries });
      } else if (!this.messages.has(seq)) pending.delete(seq);
      else {
        entry.deliveries++;
        entry.deadline = this.now + config.ackWaitMs;
        taken.push([seq, entry.deliveries]);
      }
    }
    taken.sort(([a], [b]) => a - b);
    const room = Math.min(batch - taken.length, config.maxAckPending - pending.size);
    const fresh = [...this.messages.keys()].filter((seq) => seq >= this.nextSeq[name]).sort((a, b) => a - b).slice(0, Math.max(0, room));
    for (const seq of fresh) {
      pending.set(seq, { deliveries: 1, deadline: this.now + config.ackWaitMs });
      taken.push([seq, 1]);
    }
    if (fresh.length > 0) this.nextSeq[name] = fresh[fresh.length - 1]! + 1;
    return taken;
  }

  settle(kind: 'ack' | 'nak' | 'term' | 'inProgress', name: ConsumerName, seq: number, delayMs = 0): boolean {
    const entry = this.pending[name].get(seq);
    if (entry === undefined) return false;
    if (kind === 'ack') this.pending[name].delete(seq);
    else if (kind === 'term') {
      this.pending[name].delete(seq);
      this.events.push({ kind: 'terminated', stream: 's', consumer: name, seq, reason: 'term', deliveries: entry.deliveries });
    } else if (kind === 'nak') entry.deadline = this.now + delayMs;
    else entry.deadline = this.now + CONSUMERS[name].ackWaitMs;
    return true;
  }

  retain(): number {
    let evicted = 0;
    const byAge = [...this.messages.entries()].filter(([, time]) => time < this.now - STREAM.maxAgeMs).length;
    const order = () => [...this.messages.keys()].sort((a, b) => a - b);
    if (byAge > 0) {
      for (const seq of order().slice(0, byAge)) this.messages.delete(seq);
      evicted += byAge;
      this.events.push({ kind: 'evicted', stream: 's', messages: byAge, reason: 'age' });
    }
    const over = this.messages.size - STREAM.maxMsgs;
    if (over > 0) {
      for (const seq of order().slice(0, over)) this.messages.delete(seq);
      evicted += over;
      this.events.push({ kind: 'evicted', stream: 's', messages: over, reason: 'count' });
    }
    return evicted;
  }

  /** The sequence an op's `pick` names: one the consumer holds, or any up to one past the last. */
  pickSeq(name: ConsumerName, pickIndex: number): number {
    const choices = [...new Set([...this.pending[name].keys(), ...Array.from({ length: this.lastSeq + 1 }, (_, i) => i + 1)])].sort((a, b) => a - b);
    const held = [...this.pending[name].keys()].sort((a, b) => a - b);
    // Mostly a held one, so settle calls mostly succeed.
    if (held.length > 0 && pickIndex % 4 !== 0) return held[pickIndex % held.length]!;
    return choices[pickIndex % choices.length]!;
  }
}

describe.each(STREAM_BACKENDS)('StreamStore on $name against the model', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  it('agrees with the reference model on random operations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 60 }), async (ops) => {
        const clock = new SimulatedClock();
        const events: StreamEvent[] = [];
        const store = await backend.open(clock, { onEvent: (event) => events.push(event) });
        const model = new Model();
        try {
          await store.createStream('s', STREAM);
          for (const [name, config] of Object.entries(CONSUMERS)) await store.createConsumer('s', name, config);
          for (const step of ops) {
            switch (step.kind) {
              case 'publish': {
                const acks = await Promise.all(Array.from({ length: step.count }, () => store.publish('s', Buffer.from('x'))));
                expect(acks.map((ack) => ack.seq)).toEqual(acks.map(() => model.publish()));
                break;
              }
              case 'fetch': {
                const got = await store.fetch('s', step.consumer, { batch: step.batch });
                expect(got.map((d) => [d.seq, d.deliveryCount])).toEqual(model.fetch(step.consumer, step.batch));
                break;
              }
              case 'ack':
              case 'term':
              case 'inProgress':
              case 'nak': {
                const seq = model.pickSeq(step.consumer, step.pick);
                const delayMs = step.kind === 'nak' ? step.delayMs : 0;
                const call =
                  step.kind === 'nak' ? store.nak('s', step.consumer, seq, delayMs) : store[step.kind]('s', step.consumer, seq);
                const ok = await call.then(
                  () => true,
                  (error: unknown) => {
                    expect(error).toBeInstanceOf(StreamAckUnknown);
                    return false;
                  },
                );
                expect(ok).toBe(model.settle(step.kind, step.consumer, seq, delayMs));
                break;
              }
              case 'advance':
                clock.advance(step.ms);
                model.now += step.ms;
                break;
              case 'retain':
                expect(await store.enforceRetention('s')).toBe(model.retain());
                break;
              default:
                step satisfies never;
            }
          }
          expect(events).toEqual(model.events);
          for (const name of ['c', 'd'] as const) {
            const info = await store.consumerInfo('s', name);
            expect(info.pending).toBe(model.pending[name].size);
            expect(info.nextSeq).toBe(model.nextSeq[name]);
          }
          expect((await store.streamInfo('s')).messages).toBe(model.messages.size);
        } finally {
          await store.close();
        }
      }),
      { seed: 42, numRuns: 50 },
    );
  }, 120_000);
});

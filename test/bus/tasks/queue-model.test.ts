/**
 * fast-check (fixed seed, bounded runs): the SQL task queue against a small reference model on a
 * SimulatedClock, under random enqueues (priorities, delays, idempotency keys), leases, starts,
 * heartbeats, acks, failures, releases, clock advances with lease expiry, cancels and redrives.
 * The model keeps one xstate actor of the task lifecycle machine per task and sends it the same
 * events, so the machine and the queue run in lockstep: after every step each task's state and
 * attempts in the queue equal the machine's, and every answer (leased ids in order, lost leases,
 * duplicates, refusals, dead-letter evictions) equals the model's.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, type Actor } from 'xstate';
import { SimulatedClock } from '../../../src/actors/index.js';
import { resolveRetryPolicy, retryDelay, taskLifecycle, TaskStateConflict, type LeasedTask, type TaskState } from '../../../src/bus/index.js';
import { TASK_BACKENDS } from './stores.js';

const LEASE_MS = 1_000;
const DLQ_MAX = 1;
const RETRY = { baseMs: 100, jitterMs: 0, capMs: 2_000 };
const policy = resolveRetryPolicy(RETRY);

type Op =
  | { readonly kind: 'enqueue'; readonly priority: number; readonly maxRetries: number; readonly delay: number; readonly key: string | null }
  | { readonly kind: 'lease'; readonly max: number }
  | { readonly kind: 'start' | 'heartbeat' | 'ack' | 'release'; readonly pick: number }
  | { readonly kind: 'fail'; readonly pick: number; readonly permanent: boolean }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'expire' }
  | { readonly kind: 'cancel'; readonly pick: number }
  | { readonly kind: 'redrive' };

const pick = fc.nat({ max: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      priority: fc.constantFrom(0, 0, 5, -5),
      maxRetries: fc.constantFrom(0, 0, 1, 2),
      delay: fc.constantFrom(0, 0, 500),
      key: fc.constantFrom(null, null, 'k1', 'k2'),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('lease' as const), max: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('start' as const, 'heartbeat' as const, 'ack' as const, 'release' as const), pick }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick, permanent: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(0, 1, 99, 100, 101, 200, 250, 500, 999, 1_000, 1_001) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'redrive' as const }) },
);

interface ModelTask {
  readonly id: string;
  machine: Actor<typeof taskLifecycle>;
  readonly priority: number;
  readonly maxRetries: number;
  attempts: number;
  runAfter: number;
  leaseUntil: number;
  token: number;
  finishedAt: number;
}

/** The reference: the lifecycle machine per task, timing and ordering kept in plain fields. */
class Model {
  readonly tasks = new Map<string, ModelTask>();
  readonly keys = new Map<string, string>();
  readonly evicted: string[] = [];

  constructor(readonly clock: SimulatedClock) {}

  get now(): number {
    return Math.floor(this.clock.wallNow());
  }

  state(task: ModelTask): TaskState {
    return task.machine.getSnapshot().value as TaskState;
  }

  send(task: ModelTask, type: Parameters<ModelTask['machine']['send']>[0]['type']): TaskState {
    task.machine.send({ type } as never);
    task.attempts = task.machine.getSnapshot().context.attempts;
    return this.state(task);
  }

  add(id: string, priority: number, maxRetries: number, runAfter: number): void {
    const machine = createActor(taskLifecycle, { input: { maxRetries } }).start();
    this.tasks.set(id, { id, machine, priority, maxRetries, attempts: 0, runAfter, leaseUntil: 0, token: 0, finishedAt: 0 });
  }

  lease(max: number): string[] {
    const due = [...this.tasks.values()]
      .filter((task) => ['queued', 'failed-retryable'].includes(this.state(task)) && task.runAfter <= this.now)
      .sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : 1))
      .slice(0, max);
    for (const task of due) {
      if (this.state(task) === 'failed-retryable') this.send(task, 'RETRY');
      this.send(task, 'LEASE');
      task.token++;
      task.leaseUntil = this.now + LEASE_MS;
    }
    return due.map((task) => task.id);
  }

  taken(task: ModelTask, token: number): boolean {
    return task.token === token && ['leased', 'running'].includes(this.state(task));
  }

  deadLetter(task: ModelTask): void {
    this.send(task, 'DEAD_LETTER');
    task.finishedAt = this.now;
    const letters = [...this.tasks.values()].filter((t) => this.state(t) === 'dead-lettered').sort((a, b) => a.finishedAt - b.finishedAt || (a.id < b.id ? -1 : 1));
    for (const old of letters.slice(0, Math.max(0, letters.length - DLQ_MAX))) {
      this.tasks.delete(old.id);
      this.evicted.push(old.id);
    }
  }

  fail(task: ModelTask, permanent: boolean): void {
    if (this.state(task) === 'leased') this.send(task, 'START');
    const state = this.send(task, permanent ? 'FAIL_PERMANENT' : 'FAIL');
    if (state === 'failed-permanent') this.deadLetter(task);
    else task.runAfter = this.now + retryDelay(task.attempts - 1, policy, () => 0);
  }

  expire(): number {
    let count = 0;
    const expired = [...this.tasks.values()].filter((task) => ['leased', 'running'].includes(this.state(task)) && task.leaseUntil < this.now);
    for (const task of expired.sort((a, b) => a.leaseUntil - b.leaseUntil)) {
      count++;
      const state = this.send(task, 'EXPIRE');
      if (state === 'failed-permanent') this.deadLetter(task);
      else task.runAfter = this.now;
    }
    return count;
  }
}

for (const backend of TASK_BACKENDS) {
  describe(`task queue model on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('matches the reference model and the lifecycle machine, step by step', async () => {
      // What the runs covered, so a generator that stopped reaching a path fails the test.
      const seen = { evictions: 0, expiries: 0, retries: 0, duplicates: 0, redriven: 0 };
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 40, size: 'max' }), async (ops) => {
          const clock = new SimulatedClock();
          const evicted: string[] = [];
          const queue = await backend.open(clock, { random: () => 0, events: { deadLetterEvicted: (event) => evicted.push(event.id) } });
          await queue.createQueue('q', { leaseMs: LEASE_MS, heartbeatMs: 250, retry: RETRY, deadLetterMaxEntries: DLQ_MAX });
          const model = new Model(clock);
          const held: LeasedTask[] = [];
          const choose = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
          try {
            for (const step of ops) {
              switch (step.kind) {
                case 'enqueue': {
                  const result = await queue.enqueue(
                    'q',
                    { name: 't', maxRetries: step.maxRetries, idempotencyKey: step.key, runAt: step.delay === 0 ? null : model.now + step.delay },
                    { priority: step.priority },
                  );
                  const known = step.key === null ? undefined : model.keys.get(step.key);
                  expect(result.duplicate).toBe(known !== undefined);
                  if (result.duplicate) seen.duplicates++;
                  if (known !== undefined) expect(result.id).toBe(known);
                  else {
                    model.add(result.id, step.priority, step.maxRetries, model.now + step.delay);
                    if (step.key !== null) model.keys.set(step.key, result.id);
                  }
                  break;
                }
                case 'lease': {
                  const leased = await queue.lease('q', step.max);
                  seen.retries += leased.filter((task) => task.envelope.attempts > 0).length;
                  expect(leased.map((task) => task.envelope.id)).toEqual(model.lease(step.max));
                  held.push(...leased);
                  break;
                }
                case 'start': {
                  const task = choose(held, step.pick);
                  if (task === undefined) break;
                  await queue.markRunning('q', [{ id: task.envelope.id, leaseToken: task.leaseToken }]);
                  const entry = model.tasks.get(task.envelope.id);
                  if (entry !== undefined && entry.token === task.leaseToken && model.state(entry) === 'leased') model.send(entry, 'START');
                  break;
                }
                case 'heartbeat': {
                  const task = choose(held, step.pick);
                  if (task === undefined) break;
                  const lost = await queue.heartbeat('q', [{ id: task.envelope.id, leaseToken: task.leaseToken }]);
                  const entry = model.tasks.get(task.envelope.id);
                  const holds = entry !== undefined && model.taken(entry, task.leaseToken);
                  if (holds) entry.leaseUntil = model.now + LEASE_MS;
                  expect(lost).toEqual(holds ? [] : [task.envelope.id]);
                  break;
                }
                case 'ack':
                case 'release':
                case 'fail': {
                  const task = choose(held, step.pick);
                  if (task === undefined) break;
                  held.splice(held.indexOf(task), 1);
                  const outcome =
                    step.kind === 'ack'
                      ? ({ kind: 'succeeded' } as const)
                      : step.kind === 'release'
                        ? ({ kind: 'released' } as const)
                        : ({ kind: 'failed', reason: 'permanent' in step && step.permanent ? 'permanent' : 'error', permanent: 'permanent' in step && step.permanent } as const);
                  await queue.settle('q', [{ id: task.envelope.id, leaseToken: task.leaseToken, outcome }]);
                  const entry = model.tasks.get(task.envelope.id);
                  if (entry === undefined || !model.taken(entry, task.leaseToken)) break;
                  if (step.kind === 'fail') model.fail(entry, 'permanent' in step && step.permanent);
                  else if (step.kind === 'release') {
                    model.send(entry, 'RELEASE');
                    entry.runAfter = model.now;
                  } else {
                    if (model.state(entry) === 'leased') model.send(entry, 'START');
                    model.send(entry, 'SUCCEED');
                  }
                  break;
                }
                case 'advance':
                  clock.advance(step.ms);
                  break;
                case 'expire':
                  const expired = await queue.expireLeases('q');
                  seen.expiries += expired;
                  expect(expired).toBe(model.expire());
                  break;
                case 'cancel': {
                  const entry = choose([...model.tasks.values()], step.pick);
                  if (entry === undefined) break;
                  const allowed = ['queued', 'failed-retryable', 'leased', 'running'].includes(model.state(entry));
                  if (allowed) {
                    expect(await queue.cancel(entry.id)).toBe('cancelled');
                    model.send(entry, 'CANCEL');
                  } else await expect(queue.cancel(entry.id)).rejects.toBeInstanceOf(TaskStateConflict);
                  break;
                }
                case 'redrive': {
                  const letters = [...model.tasks.values()].filter((task) => model.state(task) === 'dead-lettered');
                  expect(await queue.redrive('q')).toBe(letters.length);
                  seen.redriven += letters.length;
                  for (const task of letters) {
                    expect(model.send(task, 'REDRIVE')).toBe('queued');
                    task.machine.stop();
                    // Attempts start again at 0: a fresh machine, born queued.
                    task.machine = createActor(taskLifecycle, { input: { maxRetries: task.maxRetries } }).start();
                    task.attempts = 0;
                    task.runAfter = model.now;
                  }
                  break;
                }
              }
              const rows = await queue.list('q', { limit: 1_000 });
              const actual = Object.fromEntries(rows.map((row) => [row.envelope.id, [row.state, row.envelope.attempts]]));
              const expected = Object.fromEntries([...model.tasks.values()].map((task) => [task.id, [model.state(task), task.attempts]]));
              expect(actual).toEqual(expected);
              expect(evicted).toEqual(model.evicted);
            }
            seen.evictions += evicted.length;
          } finally {
            for (const task of model.tasks.values()) task.machine.stop();
            await queue.close();
          }
        }),
        { numRuns: backend.name === 'sqlite' ? 40 : 25, seed: 1307, endOnFailure: true },
      );
      for (const [path, count] of Object.entries(seen)) expect(count, `${path} reached`).toBeGreaterThan(0);
    }, 60_000);
  });
}

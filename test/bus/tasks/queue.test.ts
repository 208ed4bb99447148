import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import {
  checkFence,
  createFenceTable,
  InvalidTaskEnvelope,
  StaleFencingToken,
  TaskNotFound,
  TaskPayloadTooLarge,
  TaskQueueClosed,
  TaskQueueDepthExceeded,
  TaskQueueNotFound,
  TaskStateConflict,
  type TaskQueueEvents,
} from '../../../src/bus/index.js';
import { nextTaskPrefix, TASK_BACKENDS } from './stores.js';

const noJitter = { retry: { jitterMs: 0 } };

for (const backend of TASK_BACKENDS) {
  describe(`task queue on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('enqueues, leases by priority then age, runs and acks; the record keeps its history', async () => {
      const clock = new SimulatedClock();
      const queue = await backend.open(clock);
      await queue.createQueue('q');
      const low = await queue.enqueue('q', { name: 'a', payload: { n: 1 } });
      const high = await queue.enqueue('q', { name: 'a', payload: { n: 2 } }, { priority: 10 });
      const low2 = await queue.enqueue('q', { name: 'a', payload: { n: 3 } });
      expect((await queue.queueInfo('q')).depth).toBe(3);
      const leased = await queue.lease('q', 10);
      expect(leased.map((task) => task.envelope.id)).toEqual([high.id, low.id, low2.id]);
      expect(leased[0]!.envelope.payload).toEqual({ n: 2 });
      expect(await queue.lease('q', 10)).toEqual([]);
      await queue.markRunning('q', leased.map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken })));
      await queue.settle('q', leased.map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken, outcome: { kind: 'succeeded' } })));
      const record = await queue.get(high.id);
      expect(record?.state).toBe('succeeded');
      expect(record?.history.map((entry) => entry.state)).toEqual(['queued', 'leased', 'running', 'succeeded']);
      const info = await queue.queueInfo('q');
      expect(info.depth).toBe(0);
      expect(info.counts.succeeded).toBe(3);
      await queue.close();
    });

    it('leases only the names asked for; lists by state with keyset paging', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      const ids = (await queue.enqueueMany('q', [{ name: 'a' }, { name: 'b' }, { name: 'a' }, { name: 'c' }])).map((r) => r.id);
      const leased = await queue.lease('q', 10, { names: ['a', 'c'] });
      expect(leased.map((task) => task.envelope.name)).toEqual(['a', 'a', 'c']);
      const page1 = await queue.list('q', { state: 'leased', limit: 2 });
      const page2 = await queue.list('q', { state: 'leased', limit: 2, after: page1.at(-1)!.envelope.id });
      expect([...page1, ...page2].map((record) => record.envelope.id)).toEqual([ids[0], ids[2], ids[3]]);
      expect((await queue.list('q', { state: 'queued' })).map((record) => record.envelope.id)).toEqual([ids[1]]);
      expect(await queue.queues()).toEqual(['q']);
      await queue.close();
    });

    it('a delayed task waits for its run_at on the injected clock', async () => {
      const clock = new SimulatedClock();
      const queue = await backend.open(clock);
      await queue.createQueue('q');
      await queue.enqueue('q', { name: 'a', runAt: clock.wallNow() + 5_000 });
      expect(await queue.lease('q', 1)).toEqual([]);
      clock.advance(5_000);
      expect(await queue.lease('q', 1)).toHaveLength(1);
      await queue.close();
    });

    it('idempotency keys: a duplicate within 24 h returns the first id; after the window a new task', async () => {
      const clock = new SimulatedClock();
      const queue = await backend.open(clock);
      await queue.createQueue('q');
      const first = await queue.enqueue('q', { name: 'a', idempotencyKey: 'k' });
      const again = await Promise.all([queue.enqueue('q', { name: 'a', idempotencyKey: 'k' }), queue.enqueue('q', { name: 'a', idempotencyKey: 'k' })]);
      expect(first.duplicate).toBe(false);
      expect(again).toEqual([{ id: first.id, duplicate: true }, { id: first.id, duplicate: true }]);
      expect((await queue.queueInfo('q')).depth).toBe(1);
      clock.advance(24 * 60 * 60 * 1_000);
      const later = await queue.enqueue('q', { name: 'a', idempotencyKey: 'k' });
      expect(later.duplicate).toBe(false);
      expect(later.id).not.toBe(first.id);
      await queue.close();
    });

    it('enqueue joins the caller transaction: the task exists iff it commits', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      const committed = await backend.db.transaction((tx) => queue.enqueue('q', { name: 'a' }, { tx }));
      expect((await queue.get(committed.id))?.state).toBe('queued');
      let rolledBack: string | undefined;
      await expect(
        backend.db.transaction(async (tx) => {
          rolledBack = (await queue.enqueue('q', { name: 'a' }, { tx })).id;
          throw new Error('caller fails');
        }),
      ).rejects.toThrow('caller fails');
      expect(rolledBack).toBeDefined();
      expect(await queue.get(rolledBack!)).toBeUndefined();
      expect((await queue.queueInfo('q')).depth).toBe(1);
      await queue.close();
    });

    it('a fenced enqueue with a stale token is refused and writes nothing', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      await createFenceTable(backend.db);
      await backend.db.transaction((tx) => checkFence(tx, `sched-${backend.name}`, 5));
      await expect(queue.enqueue('q', { name: 'a' }, { fence: { key: `sched-${backend.name}`, token: 4 } })).rejects.toBeInstanceOf(StaleFencingToken);
      expect((await queue.queueInfo('q')).depth).toBe(0);
      await queue.enqueue('q', { name: 'a' }, { fence: { key: `sched-${backend.name}`, token: 6 } });
      expect((await queue.queueInfo('q')).depth).toBe(1);
      await queue.close();
    });

    it('a queue deleted by another instance after its config was cached: the write names the nearest queue still there', async () => {
      const table = nextTaskPrefix();
      const first = await backend.open(undefined, { table });
      const second = await backend.open(undefined, { table });
      await first.createQueue('gone-q');
      await first.enqueue('gone-q', { name: 'a' });
      await second.createQueue('gone-r');
      await second.deleteQueue('gone-q', { force: true });
      // first still holds gone-q's config: the enqueue reaches the batch write, which finds no queue row.
      const error = await first.enqueue('gone-q', { name: 'b' }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(TaskQueueNotFound);
      expect(error).toMatchObject({ queue: 'gone-q', nearest: 'gone-r', message: 'no task queue named "gone-q"; did you mean "gone-r"?' });
      await second.deleteQueue('gone-r', { force: true });
      await first.close();
      await second.close();
    });

    it('bad input: unknown queue and id, oversized payload, full queue, bad envelope', async () => {
      const queue = await backend.open();
      await queue.createQueue('small', { maxDepth: 2, maxPayloadBytes: 100 });
      await expect(queue.enqueue('nope', { name: 'a' })).rejects.toBeInstanceOf(TaskQueueNotFound);
      await expect(queue.lease('nope', 1)).rejects.toBeInstanceOf(TaskQueueNotFound);
      // A typo names the queue it was probably meant for.
      await expect(queue.enqueue('smal', { name: 'a' })).rejects.toMatchObject({ code: 'TASK_QUEUE_NOT_FOUND', nearest: 'small', message: 'no task queue named "smal"; did you mean "small"?' });
      await expect(queue.queueInfo('nope')).rejects.toMatchObject({ nearest: undefined, message: 'no task queue named "nope"' });
      await expect(queue.cancel('0190a000-0000-7000-8000-000000000000')).rejects.toBeInstanceOf(TaskNotFound);
      expect(await queue.get('missing')).toBeUndefined();
      await expect(queue.enqueue('small', { name: 'a', payload: 'x'.repeat(200) })).rejects.toBeInstanceOf(TaskPayloadTooLarge);
      await expect(queue.enqueue('small', { name: 'bad name' })).rejects.toBeInstanceOf(InvalidTaskEnvelope);
      await queue.enqueueMany('small', [{ name: 'a' }, { name: 'b' }]);
      const full = await queue.enqueue('small', { name: 'c', idempotencyKey: 'c' }).catch((error: unknown) => error);
      expect(full).toBeInstanceOf(TaskQueueDepthExceeded);
      expect((full as TaskQueueDepthExceeded).limit).toBe(2);
      // The refused enqueue left no idempotency key behind: once there is room, the key enqueues a task.
      const [head] = await queue.lease('small', 1);
      await queue.settle('small', [{ id: head!.envelope.id, leaseToken: head!.leaseToken, outcome: { kind: 'succeeded' } }]);
      const retried = await queue.enqueue('small', { name: 'c', idempotencyKey: 'c' });
      expect(retried.duplicate).toBe(false);
      expect((await queue.get(retried.id))?.state).toBe('queued');
      // enqueueMany is all or nothing.
      await queue.createQueue('three', { maxDepth: 3 });
      await expect(queue.enqueueMany('three', [{ name: 'a' }, { name: 'a' }, { name: 'a' }, { name: 'a' }])).rejects.toBeInstanceOf(TaskQueueDepthExceeded);
      expect((await queue.queueInfo('three')).depth).toBe(0);
      await queue.close();
    });

    it('the depth cap holds while enqueues skip the count: tasks that finish make room, a redrive takes it back', async () => {
      const queue = await backend.open();
      await queue.createQueue('cap', { maxDepth: 4 });
      const fill = (n: number): Promise<unknown> => Promise.all(Array.from({ length: n }, () => queue.enqueue('cap', { name: 'a' })));
      const deadLetterAll = async (): Promise<void> => {
        const leased = await queue.lease('cap', 10);
        await queue.settle('cap', leased.map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken, outcome: { kind: 'failed' as const, reason: 'error' as const, permanent: true } })));
      };
      await fill(4);
      await expect(queue.enqueue('cap', { name: 'a' })).rejects.toBeInstanceOf(TaskQueueDepthExceeded);
      // All four finish: the queue's bound (4) over-counts, so the next enqueue counts, finds 0, and goes in.
      await deadLetterAll();
      await fill(1);
      // Redriven, the four are active again beside the one: the bound (1) is dropped, and the count refuses the next.
      expect(await queue.redrive('cap')).toBe(4);
      await expect(queue.enqueue('cap', { name: 'a' })).rejects.toBeInstanceOf(TaskQueueDepthExceeded);
      expect((await queue.queueInfo('cap')).depth).toBe(5);
      // The same through a single task's retry.
      await deadLetterAll();
      await fill(1);
      const [dead] = await queue.deadLetters('cap');
      await queue.retry(dead!.envelope.id);
      await fill(2);
      await expect(queue.enqueue('cap', { name: 'a' })).rejects.toBeInstanceOf(TaskQueueDepthExceeded);
      expect((await queue.queueInfo('cap')).depth).toBe(4);
      await queue.close();
    });

    it('a payload at the 1 MiB cap goes through; one byte more is refused; a closed queue refuses calls', async () => {
      const queue = await backend.open();
      await queue.createQueue('big');
      const payload = 'x'.repeat(1024 * 1024 - 2);
      const { id } = await queue.enqueue('big', { name: 'a', payload });
      const [task] = await queue.lease('big', 1);
      expect(task?.envelope.id).toBe(id);
      expect(task?.envelope.payload).toBe(payload);
      await expect(queue.enqueue('big', { name: 'a', payload: `${payload}x` })).rejects.toBeInstanceOf(TaskPayloadTooLarge);
      // Many medium envelopes: no one statement or reply outgrows the SQLite frame budget.
      const medium = 'é'.repeat(20_000);
      await queue.enqueueMany('big', Array.from({ length: 150 }, (_, i) => ({ name: 'm', payload: { i, medium } })));
      const leased = await queue.lease('big', 1_000);
      expect(leased).toHaveLength(150);
      expect(leased.every((t) => (t.envelope.payload as { medium: string }).medium === medium)).toBe(true);
      expect(await queue.list('big', { limit: 1_000 })).toHaveLength(151);
      expect((await queue.get(id))?.envelope.payload).toBe(payload);
      await queue.close();
      await expect(queue.enqueue('big', { name: 'a' })).rejects.toBeInstanceOf(TaskQueueClosed);
      await expect(queue.lease('big', 1)).rejects.toBeInstanceOf(TaskQueueClosed);
    });

    it('failures retry after the backoff; the last one dead-letters with its reason; redrive brings it back', async () => {
      const clock = new SimulatedClock();
      const events: string[] = [];
      const evicted: string[] = [];
      const recorder: TaskQueueEvents = { transition: (e) => events.push(`${e.from}>${e.to}`), deadLetterEvicted: (e) => evicted.push(e.cause) };
      const queue = await backend.open(clock, { events: recorder });
      await queue.createQueue('q', { ...noJitter, deadLetterMaxEntries: 1 });
      const { id } = await queue.enqueue('q', { name: 'a', maxRetries: 1 });
      const fail = async (): Promise<void> => {
        const [task] = await queue.lease('q', 1);
        await queue.markRunning('q', [{ id, leaseToken: task!.leaseToken }]);
        await queue.settle('q', [{ id, leaseToken: task!.leaseToken, outcome: { kind: 'failed', reason: 'error', detail: 'boom' } }]);
      };
      await fail();
      expect((await queue.get(id))?.state).toBe('failed-retryable');
      clock.advance(999);
      expect(await queue.lease('q', 1)).toEqual([]);
      clock.advance(1);
      await fail();
      const record = await queue.get(id);
      expect(record?.state).toBe('dead-lettered');
      expect(record?.envelope.attempts).toBe(2);
      const [letter] = await queue.deadLetters('q');
      expect(letter?.reason).toBe('max-retries');
      expect(letter?.detail).toBe('error: boom');
      expect(events).toContain('failed-retryable>queued');
      expect(events).toContain('failed-permanent>dead-lettered');
      // The DLQ holds one: a second dead letter evicts the oldest.
      const second = await queue.enqueue('q', { name: 'b', maxRetries: 0 });
      const [task] = await queue.lease('q', 1);
      clock.advance(1);
      await queue.settle('q', [{ id: second.id, leaseToken: task!.leaseToken, outcome: { kind: 'failed', reason: 'permanent', permanent: true } }]);
      expect(evicted).toEqual(['count']);
      expect(await queue.get(id)).toBeUndefined();
      expect((await queue.deadLetters('q')).map((l) => [l.envelope.id, l.reason])).toEqual([[second.id, 'permanent']]);
      expect(await queue.redrive('q')).toBe(1);
      const back = await queue.get(second.id);
      expect([back?.state, back?.envelope.attempts]).toEqual(['queued', 0]);
      await queue.close();
    });

    it('lease expiry requeues as an attempt; a late settle with the old token is ignored; heartbeat reports lost leases', async () => {
      const clock = new SimulatedClock();
      const queue = await backend.open(clock);
      await queue.createQueue('q', { leaseMs: 1_000, heartbeatMs: 250 });
      const { id } = await queue.enqueue('q', { name: 'a' });
      const [first] = await queue.lease('q', 1);
      clock.advance(500);
      expect(await queue.heartbeat('q', [{ id, leaseToken: first!.leaseToken }])).toEqual([]);
      clock.advance(999);
      expect(await queue.expireLeases('q')).toBe(0);
      clock.advance(2);
      expect(await queue.expireLeases('q')).toBe(1);
      expect((await queue.get(id))?.envelope.attempts).toBe(1);
      expect(await queue.heartbeat('q', [{ id, leaseToken: first!.leaseToken }])).toEqual([id]);
      const [second] = await queue.lease('q', 1);
      expect(second!.leaseToken).toBeGreaterThan(first!.leaseToken);
      await queue.settle('q', [{ id, leaseToken: first!.leaseToken, outcome: { kind: 'succeeded' } }]);
      expect((await queue.get(id))?.state).toBe('leased');
      await queue.close();
    });

    it('cancel: queued at once; running reported by the next heartbeat; succeeded refused', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      const a = await queue.enqueue('q', { name: 'a' });
      expect(await queue.cancel(a.id)).toBe('cancelled');
      const b = await queue.enqueue('q', { name: 'b' });
      const [task] = await queue.lease('q', 1);
      await queue.markRunning('q', [{ id: b.id, leaseToken: task!.leaseToken }]);
      expect(await queue.cancel(b.id)).toBe('cancelled');
      expect(await queue.heartbeat('q', [{ id: b.id, leaseToken: task!.leaseToken }])).toEqual([b.id]);
      await expect(queue.cancel(b.id)).rejects.toBeInstanceOf(TaskStateConflict);
      await expect(queue.retry(a.id)).rejects.toBeInstanceOf(TaskStateConflict);
      await queue.close();
    });

    it('released at shutdown: back to queued with reason shutdown and no attempt; or dead-lettered when configured', async () => {
      const queue = await backend.open();
      await queue.createQueue('keep');
      await queue.createQueue('dlq', { onShutdown: 'dead-letter' });
      for (const name of ['keep', 'dlq']) {
        const { id } = await queue.enqueue(name, { name: 'a' });
        const [task] = await queue.lease(name, 1);
        await queue.markRunning(name, [{ id, leaseToken: task!.leaseToken }]);
        await queue.settle(name, [{ id, leaseToken: task!.leaseToken, outcome: { kind: 'released' } }]);
        const record = await queue.get(id);
        expect(record?.envelope.attempts).toBe(0);
        expect(record?.history.at(-1)?.reason).toBe('shutdown');
        expect(record?.state).toBe(name === 'keep' ? 'queued' : 'dead-lettered');
      }
      expect((await queue.deadLetters('dlq'))[0]?.reason).toBe('shutdown');
      await queue.close();
    });
  });
}

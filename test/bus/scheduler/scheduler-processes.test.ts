/**
 * V7-4, part 2: two scheduler nodes as OS processes on one Postgres, default lease timings (10 s
 * TTL, 3 s renewal), firing one-shot entries due every second.
 *
 * 1. The leader is held in the middle of a fire (its statements stop, as in a long pause): its
 *    lease runs out, the other node takes over and fires. Released, the old leader's held fire
 *    reaches the database with its old token and is refused by the fencing check.
 * 2. The new leader is SIGKILLed: the first node takes over within 15 s.
 * Every entry due by the end ran exactly once: no task twice, none missing.
 */
import { describe, expect, it } from 'vitest';
import { ActorSystem } from '../../../src/actors/index.js';
import { highestFencingToken, openTaskQueue } from '../../../src/bus/index.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { freshDatabase } from '../../support/pg.js';
import { killedAfterEach, spawnLines, until, type LineChild as Child } from '../../support/child-lines.js';

interface Status {
  readonly type: 'status';
  readonly at: number;
  readonly role: string;
  readonly token: number | null;
  readonly fires: number;
  readonly refused: number;
}

const spawned = killedAfterEach();

interface Node {
  readonly holder: string;
  readonly child: Child;
  readonly lines: (Status | { type: 'paused'; at: number })[];
  readonly ready: Promise<void>;
  last(): Status | undefined;
}

function node(database: string, holder: string, seed: string[] = []): Node {
  const lines: Node['lines'] = [];
  const { child, ready } = spawnLines<Node['lines'][number]>('test/bus/scheduler/fixtures/scheduler-node.ts', [database, holder, ...seed], (line) => lines.push(line));
  spawned.add(child);
  return {
    holder,
    child,
    lines,
    ready,
    last: () => lines.filter((line): line is Status => line.type === 'status').at(-1),
  };
}

const leads = (n: Node): boolean => n.last()?.role === 'leader';

describe('scheduler across two OS processes on Postgres', () => {
  it('V7-4: a paused leader\'s late fire is refused by the fence; a SIGKILLed leader is replaced within 15 s; no run twice', async () => {
    const fresh = freshDatabase('sched');
    const system = new ActorSystem({ node: 'sched-test', logger: false });
    const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 2 });
    try {
      const queue = await openTaskQueue(db, { table: 'tq' });
      await queue.createQueue('q');
      const t0 = Date.now() + 4_000;
      const count = 60;
      const a = node(fresh.database, 'a', ['seed', String(t0), String(count)]);
      await a.ready;
      const b = node(fresh.database, 'b');
      await b.ready;
      const nodes = [a, b];
      const first = await until(() => nodes.find(leads), 20_000, 'a leader');
      const other = nodes.find((n) => n !== first)!;
      const firstToken = first.last()!.token!;
      await until(() => first.last()!.fires >= 2, 15_000, 'the leader to fire');
      expect(other.last()?.fires ?? 0).toBe(0);

      // 1. Hold the leader in the middle of its next fire.
      first.child.stdin.write('pause\n');
      await until(() => first.lines.some((line) => line.type === 'paused'), 5_000, 'the leader to be held');
      const second = await until(() => (leads(other) ? other.last() : undefined), 20_000, 'the follower to take over');
      expect(second.token!).toBeGreaterThan(firstToken);
      await until(() => other.last()!.fires >= 2, 10_000, 'the new leader to fire');
      first.child.stdin.write('resume\n');
      const refused = await until(() => (first.last()!.refused >= 1 ? first.last() : undefined), 10_000, 'the held fire to be refused');
      expect(refused.role).not.toBe('leader');
      expect(refused.refused).toBe(1);
      expect(await highestFencingToken(db, 'scheduler:sched')).toBe(second.token);

      // 2. SIGKILL the new leader: the first node takes over within 15 s.
      other.child.kill('SIGKILL');
      const killedAt = Date.now();
      const third = await until(() => (leads(first) && first.last()!.token !== firstToken ? first.last() : undefined), 20_000, 'the first node to take over');
      const takeoverMs = third.at - killedAt;
      expect(takeoverMs).toBeLessThanOrEqual(15_000);
      expect(third.token!).toBeGreaterThan(second.token!);

      // Every entry due by now (with a tick to spare) ran exactly once.
      const dueBy = Date.now() - 2_000;
      const due = Array.from({ length: count }, (_, i) => i + 1).filter((k) => t0 + k * 1_000 <= dueBy);
      const firesBefore = third.fires;
      await until(() => first.last()!.fires > firesBefore, 5_000, 'the third leader to fire');
      let ks: number[] = [];
      const deadline = Date.now() + 5_000;
      do {
        const tasks = await queue.list('q', { limit: 1_000 });
        ks = tasks.map((task) => (task.envelope.payload as { k: number }).k).sort((x, y) => x - y);
      } while (!due.every((k) => ks.includes(k)) && Date.now() < deadline);
      expect(new Set(ks).size, 'no entry ran twice').toBe(ks.length);
      expect(ks.filter((k) => due.includes(k))).toEqual(due);
      expect(due.length).toBeGreaterThan(20);
      process.stdout.write(`scheduler takeover after SIGKILL: ${takeoverMs} ms; ${ks.length} runs, refused late fires: ${refused.refused}\n`);
      await queue.close();
    } finally {
      for (const child of spawned) child.kill('SIGKILL');
      await db.close();
      await system.shutdown();
      fresh.drop();
    }
  }, 90_000);
});

/**
 * Two real OS processes contend for one lease in a shared Postgres (default timings: 10 s TTL, 3 s
 * renewal). The leader is SIGKILLed (no terminate, no release): the follower must take over within
 * 15 s with a higher token, and the dead leader's token is then refused by the fencing check.
 */
import { describe, expect, it } from 'vitest';
import { ActorSystem } from '../../../src/actors/index.js';
import { StaleFencingToken, checkFence, createFenceTable, type LeaseEvent } from '../../../src/bus/index.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { freshDatabase } from '../../support/pg.js';
import { killedAfterEach, spawnLines, until, type LineChild as Child } from '../../support/child-lines.js';

type Line = LeaseEvent & { at: number };

const spawned = killedAfterEach();

interface Contender {
  readonly holder: string;
  readonly child: Child;
  readonly events: Line[];
  readonly ready: Promise<void>;
}

function contender(database: string, holder: string): Contender {
  const events: Line[] = [];
  const { child, ready } = spawnLines<Line>('test/bus/leases/fixtures/contender.ts', [database, holder], (event) => events.push(event));
  spawned.add(child);
  return { holder, child, events, ready };
}

describe('leader lease across two OS processes on Postgres', () => {
  it('SIGKILL the leader: the follower takes over within 15 s, and the old token is fenced out', async () => {
    const fresh = freshDatabase('lease');
    const system = new ActorSystem({ node: 'lease-test' });
    const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 2 });
    try {
      await createFenceTable(db);
      const contenders = [contender(fresh.database, 'p1'), contender(fresh.database, 'p2')];
      await Promise.all(contenders.map((c) => c.ready));
      const first = await until(() => contenders.find((c) => c.events.some((e) => e.type === 'elected')), 20_000, 'a leader');
      const other = contenders.find((c) => c !== first)!;
      const firstToken = first.events.find((e) => e.type === 'elected')!.token;
      // The leader fires once, fenced.
      await db.transaction((tx) => checkFence(tx, 'every-minute', firstToken));
      // Let it renew a few times; the follower must stay passive meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(other.events).toEqual([]);
      first.child.kill('SIGKILL');
      const killedAt = Date.now();
      const elected = await until(() => other.events.find((e) => e.type === 'elected'), 20_000, 'the follower to take over');
      expect(elected.at - killedAt).toBeLessThanOrEqual(15_000);
      expect(elected.token).toBeGreaterThan(firstToken);
      await db.transaction((tx) => checkFence(tx, 'every-minute', elected.token));
      // Had the killed leader only been paused, its next fenced enqueue would be refused.
      await expect(db.transaction((tx) => checkFence(tx, 'every-minute', firstToken))).rejects.toBeInstanceOf(StaleFencingToken);
      process.stdout.write(`lease takeover after SIGKILL: ${elected.at - killedAt} ms\n`);
    } finally {
      for (const child of spawned) child.kill('SIGKILL');
      await db.close();
      await system.shutdown();
      fresh.drop();
    }
  }, 90_000);
});

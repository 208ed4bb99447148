/**
 * Convergence by model (fast-check): three instances, each on its own SQLite file, write the same few
 * keys of a replicated ORM model; entries travel between them by the real oplog and sink in random
 * order (slices starting past the cursor, so gaps), duplicated, delayed, with instances restarted
 * (oplog reopened from its persisted head). After full delivery all three hold the same rows, under
 * each policy, and every conflict's loser is in each logging node's conflict log. Plus the V7-7
 * embedded case spelled out: concurrent writes of one key converge to the LWW winner, the loser in
 * the log; and a hook with a slow resolver falls back to LWW after 5 s of a simulated clock.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import type { Database } from '../../../src/data/index.js';
import { defineModel, field, Orm, type AnyModel } from '../../../src/data/orm/index.js';
import { readConflicts } from '../../../src/data/replication/conflicts.js';
import { Oplog } from '../../../src/data/replication/oplog.js';
import { ormTarget } from '../../../src/data/replication/orm-target.js';
import { OplogApplier } from '../../../src/data/replication/sink.js';
import type { PolicyTimers } from '../../../src/data/replication/policies.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { testSystem } from '../../support/systems.js';

const LwwDoc = defineModel('docs_lww', { id: field.int64().primaryKey(), body: field.text() }, { replicated: { policy: 'lww' } });
const OptDoc = defineModel('docs_opt', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });
// A deterministic, symmetric resolver whose order agrees with causality: each write ranks above the
// row it read (rank grows), the higher rank wins, LWW order breaks ties. Convergence among more than
// two instances needs exactly that of a resolver (docs/replication.md).
const HookDoc = defineModel(
  'docs_hook',
  { id: field.int64().primaryKey(), body: field.text(), rank: field.int32() },
  {
    replicated: {
      policy: 'hook',
      resolve: (local, remote) => {
        const l = Number(local.data?.rank ?? -1);
        const r = Number(remote.data?.rank ?? -1);
        if (l !== r) return r > l ? 'remote' : 'local';
        return remote.ts > local.ts || (remote.ts === local.ts && remote.instance > local.instance) ? 'remote' : 'local';
      },
    },
  },
);
const MODELS: readonly AnyModel[] = [LwwDoc, OptDoc, HookDoc];
const NAMES = ['i-a', 'i-b', 'i-c'];

interface Instance {
  db: Database;
  oplog: Oplog;
  orm: Orm;
  sink: OplogApplier;
}

let system: ActorSystem;
let dir: string;
let dbs: Database[];
let clock = 1_700_000_000_000;

async function boot(i: number, timers?: PolicyTimers): Promise<Instance> {
  const db = dbs[i]!;
  const oplog = await Oplog.open(db, { instance: NAMES[i]!, now: () => clock });
  return { db, oplog, orm: new Orm(db, { oplog }), sink: new OplogApplier(oplog, { targets: MODELS.map((m) => ormTarget(db, m)), ...(timers === undefined ? {} : { timers }) }) };
}

async function reset(): Promise<Instance[]> {
  for (const db of dbs) {
    for (const t of ['docs_lww', 'docs_opt', 'docs_hook', '_molo_oplog', '_molo_oplog_head', '_molo_replica_keys', '_molo_oplog_cursors', '_molo_conflicts']) {
      await db.query(`DELETE FROM ${t}`);
    }
  }
  return Promise.all([0, 1, 2].map((i) => boot(i)));
}

/** Delivers everything in every direction until nothing moves. */
async function settle(nodes: Instance[]): Promise<void> {
  for (let round = 0; round < 50; round++) {
    let moved = 0;
    for (let to = 0; to < 3; to++) {
      for (let from = 0; from < 3; from++) {
        if (from === to) continue;
        const batch = await nodes[from]!.oplog.read(await nodes[to]!.sink.cursor(NAMES[from]!));
        if (batch.length === 0) continue;
        moved += (await nodes[to]!.sink.apply(NAMES[from]!, batch)).applied + batch.length;
      }
    }
    if (moved === 0) return;
  }
  throw new Error('did not settle');
}

async function state(node: Instance, model: AnyModel): Promise<unknown[]> {
  return (await node.db.query(`SELECT * FROM ${model.table} ORDER BY id`)).rows;
}

beforeEach(async () => {
  system = testSystem();
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-'));
  dbs = await Promise.all([0, 1, 2].map((i) => openSqlite(system, { file: join(dir, `n${i}.db`) })));
  const first = await Promise.all([0, 1, 2].map((i) => boot(i)));
  for (const node of first) await node.orm.createTables(...MODELS);
});

afterEach(async () => {
  for (const db of dbs ?? []) await db.close();
  await system?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('replication converges', () => {
  const command = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), node: fc.nat(2), key: fc.integer({ min: 1, max: 3 }), body: fc.string({ maxLength: 6 }), del: fc.boolean() }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), from: fc.nat(2), to: fc.nat(2), skip: fc.nat(2), take: fc.integer({ min: 1, max: 4 }), dup: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), node: fc.nat(2), ms: fc.integer({ min: -50, max: 50 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), node: fc.nat(2) }) },
  );

  for (const model of MODELS) {
    it(`under ${model.replicated!.policy}: random writes, delivery order, duplication, delay and restarts`, { timeout: 50_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), async (commands) => {
          const nodes = await reset();
          for (const c of commands) {
            if (c.kind === 'write') {
              const orm = nodes[c.node]!.orm;
              const existing = await orm.find(model, BigInt(c.key));
              const hook = model === HookDoc;
              if (c.del && !hook) {
                if (existing !== undefined) await orm.delete(model, existing);
              } else {
                const rank = hook ? { rank: Number((existing as { rank?: number } | undefined)?.rank ?? 0) + 1 + (c.body.length % 2) } : {};
                await orm.upsert(model, { id: BigInt(c.key), body: `${NAMES[c.node]}:${c.body}`, ...rank } as never);
              }
            } else if (c.kind === 'deliver') {
              if (c.from === c.to) continue;
              const to = nodes[c.to]!;
              const cursor = await to.sink.cursor(NAMES[c.from]!);
              const batch = (await nodes[c.from]!.oplog.read(cursor)).slice(c.skip, c.skip + c.take);
              await to.sink.apply(NAMES[c.from]!, batch);
              if (c.dup) await to.sink.apply(NAMES[c.from]!, batch);
            } else if (c.kind === 'tick') clock += c.ms;
            else nodes[c.node] = await boot(c.node);
          }
          await settle(nodes);
          const [a, b, c] = await Promise.all(nodes.map((n) => state(n, model)));
          expect(b).toEqual(a);
          expect(c).toEqual(a);
          // Every conflict logged names a loser that is not the surviving writer of its key.
          for (const node of nodes) {
            for (const conflict of await readConflicts(node.db)) {
              expect(conflict.loser.ts === conflict.winner.ts && conflict.loser.instance === conflict.winner.instance).toBe(false);
            }
          }
        }),
        { numRuns: 15 },
      );
    });
  }

  it('V7-7 embedded: concurrent writes of one key converge to the LWW winner; the loser is in both conflict logs', async () => {
    const [a, b] = await reset();
    await a!.orm.upsert(LwwDoc, { id: 1n, body: 'from a' });
    clock += 1;
    await b!.orm.upsert(LwwDoc, { id: 1n, body: 'from b' });
    await b!.sink.apply('i-a', await a!.oplog.read(0));
    await a!.sink.apply('i-b', await b!.oplog.read(0));
    for (const node of [a!, b!]) {
      expect(await state(node, LwwDoc)).toEqual([{ id: 1, body: 'from b' }]);
      const log = await readConflicts(node.db);
      expect(log).toHaveLength(1);
      expect(log[0]!.loser).toMatchObject({ instance: 'i-a', op: 'upsert', data: { id: 1n, body: 'from a' } });
      expect(log[0]!.winner.instance).toBe('i-b');
    }
    // A successor (b overwrites what it received from a) is no conflict.
    await a!.sink.apply('i-b', await b!.oplog.read(0));
    await b!.orm.upsert(LwwDoc, { id: 1n, body: 'b again' });
    await a!.sink.apply('i-b', await b!.oplog.read(1));
    expect(await state(a!, LwwDoc)).toEqual([{ id: 1, body: 'b again' }]);
    expect(await readConflicts(a!.db)).toHaveLength(1);
  });

  it('hook: a resolver that does not answer within 5 s (simulated clock) falls back to LWW, counted', async () => {
    await reset();
    const pending: { fn: () => void; at: number }[] = [];
    let simulated = 0;
    const timers: PolicyTimers = {
      setTimeout: (fn, ms) => {
        const t = { fn, at: simulated + ms };
        pending.push(t);
        return t;
      },
      clearTimeout: (h) => {
        const i = pending.indexOf(h as never);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    const Slow = defineModel('docs_hook', { id: field.int64().primaryKey(), body: field.text(), rank: field.int32() }, { replicated: { policy: 'hook', resolve: () => new Promise<'local'>(() => {}) } });
    const a = await boot(0);
    const bOplog = await Oplog.open(dbs[1]!, { instance: 'i-b', now: () => clock });
    const b = { orm: new Orm(dbs[1]!, { oplog: bOplog }), sink: new OplogApplier(bOplog, { targets: [ormTarget(dbs[1]!, Slow)], timers }) };
    await a.orm.upsert(HookDoc, { id: 1n, body: 'a', rank: 1 });
    clock += 1;
    await b.orm.upsert(Slow, { id: 1n, body: 'b', rank: 1 });
    const applying = b.sink.apply('i-a', await a.oplog.read(0));
    await new Promise((r) => setTimeout(r, 50));
    expect(pending).toHaveLength(1);
    simulated += 4_999;
    for (const t of pending.filter((p) => p.at <= simulated)) t.fn();
    await new Promise((r) => setTimeout(r, 20));
    simulated += 1;
    for (const t of pending.filter((p) => p.at <= simulated)) t.fn();
    const result = await applying;
    expect(result.conflicts).toBe(1);
    expect(b.sink.totals.fallbacks).toBe(1);
    const [conflict] = await readConflicts(dbs[1]!);
    expect(conflict!.reason).toBe('hook-timeout');
    // LWW: b's write is later, so b's row stands and a's is the loser.
    expect(conflict!.loser.instance).toBe('i-a');
    expect((await dbs[1]!.query('SELECT body FROM docs_hook')).rows).toEqual([{ body: 'b' }]);
  });
});

/**
 * Model-based (fast-check): three nodes over real links, each on its own SQLite file, replicate a
 * last-writer-wins model while random commands write, delete, cut and heal links. Writes are a few
 * milliseconds apart, so the last write in command order carries the highest hybrid timestamp: the
 * reference model is a map of each key's last write. After every link heals and replication is
 * caught up, all three replicas hold exactly the model's rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/data/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { Oplog, OplogApplier, ormTarget } from '../../../src/data/replication/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { Replication, startNode, type Node } from '../../../src/nodes/index.js';
import { SECRET } from '../support.js';

const Cell = defineModel('cells', { id: field.int64().primaryKey(), value: field.text() }, { replicated: { policy: 'lww' } });
const KEYS = 4;

interface Member {
  node: Node;
  db: Database;
  orm: Orm;
  replication: Replication;
}
interface Real {
  members: Member[];
}
/** Each key's last write: its value, or null once deleted. */
type Model = Map<number, string | null>;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Write implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly at: number,
    readonly key: number,
    readonly value: string,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await pause(3);
    // An upsert: a replicated insert of the key may land between a find and an insert.
    await real.members[this.at]!.orm.upsert(Cell, { id: BigInt(this.key), value: this.value });
    model.set(this.key, this.value);
  }
  toString = () => `write(${this.at}, ${this.key}, ${this.value})`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly at: number,
    readonly key: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await pause(3);
    const orm = real.members[this.at]!.orm;
    const row = await orm.find(Cell, BigInt(this.key));
    // Deleting what this node does not have is no write at all.
    if (row === undefined) return;
    await orm.delete(Cell, row);
    model.set(this.key, null);
  }
  toString = () => `delete(${this.at}, ${this.key})`;
}

class Cut implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly j: number,
  ) {}
  check = () => this.i !== this.j;
  async run(_model: Model, real: Real): Promise<void> {
    const [a, b] = [real.members[this.i]!.node, real.members[this.j]!.node];
    a.disconnect(b.name);
    const deadline = Date.now() + 5_000;
    while ((a.isConnected(b.name) || b.isConnected(a.name)) && Date.now() < deadline) await pause(5);
  }
  toString = () => `cut(${this.i}, ${this.j})`;
}

class Heal implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly j: number,
  ) {}
  check = () => this.i !== this.j;
  async run(_model: Model, real: Real): Promise<void> {
    await connect(real.members[this.i]!.node, real.members[this.j]!.node);
  }
  toString = () => `heal(${this.i}, ${this.j})`;
}

async function connect(a: Node, b: Node): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await a.connect(b.name);
      return;
    } catch (error) {
      // Just cut: the peer may still be closing the old link.
      if (attempt >= 20) throw error;
      await pause(50);
    }
  }
}

const node = fc.integer({ min: 0, max: 2 });
const key = fc.integer({ min: 1, max: KEYS });
const commands = fc.commands(
  [
    fc.tuple(node, key, fc.stringMatching(/^[a-z]{1,6}$/)).map(([at, k, v]) => new Write(at, k, v)),
    fc.tuple(node, key, fc.stringMatching(/^[a-z]{1,6}$/)).map(([at, k, v]) => new Write(at, k, v)),
    fc.tuple(node, key).map(([at, k]) => new Delete(at, k)),
    fc.tuple(node, node).map(([i, j]) => new Cut(i, j)),
    fc.tuple(node, node).map(([i, j]) => new Heal(i, j)),
  ],
  { maxCommands: 25 },
);

async function rows(db: Database): Promise<[number, string][]> {
  return (await db.query<{ id: bigint; value: string }>('SELECT id, value FROM cells ORDER BY id')).rows.map((row) => [Number(row.id), row.value]);
}

describe('replication over three nodes (model)', () => {
  it('converges to the last write of every key after any sequence of writes, deletes, cuts and heals', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const dir = mkdtempSync(join(tmpdir(), 'molo-repl-mesh-'));
        const members: Member[] = [];
        try {
          for (const name of ['x', 'y', 'z']) {
            const n = await startNode({ name: `${name}@127.0.0.1:0`, secret: SECRET, system: { logger: false }, reconnectMinMs: 20, reconnectMaxMs: 100 });
            const db = await openSqlite(n.system, { file: join(dir, `${name}.db`) });
            const oplog = await Oplog.open(db, { instance: n.name });
            const orm = new Orm(db, { oplog });
            await orm.createTables(Cell);
            const replication = await Replication.start(n, { source: oplog, sink: new OplogApplier(oplog, { targets: [ormTarget(db, Cell)] }), retryMinMs: 10, retryMaxMs: 100 });
            members.push({ node: n, db, orm, replication });
          }
          for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) await connect(members[i]!.node, members[j]!.node);
          const model: Model = new Map();
          await fc.asyncModelRun(() => ({ model, real: { members } }), cmds);
          // Heal everything, let replication catch up, compare.
          for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) if (!members[i]!.node.isConnected(members[j]!.node.name)) await connect(members[i]!.node, members[j]!.node);
          const want = [...model.entries()].filter(([, value]) => value !== null).sort(([a], [b]) => a - b);
          const deadline = Date.now() + 15_000;
          for (;;) {
            const got = await Promise.all(members.map((member) => rows(member.db)));
            if (got.every((replica) => JSON.stringify(replica) === JSON.stringify(want))) break;
            if (Date.now() > deadline) expect(got).toEqual([want, want, want]);
            await pause(20);
          }
        } finally {
          for (const member of members) {
            await member.replication.stop().catch(() => undefined);
            await member.db.close().catch(() => undefined);
            await member.node.stop();
          }
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: Number(process.env.MESH_RUNS ?? 6), endOnFailure: process.env.MESH_RUNS !== undefined },
    );
  }, 240_000);
});

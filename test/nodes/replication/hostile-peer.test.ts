/**
 * A hostile peer against replication (the attack first): it pushes entries that claim another
 * node's writes, names another node as its sender, sends malformed and oversized batches and floods
 * pulls. None of it is applied, none of it crashes the receiver, and honest replication goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/data/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { Oplog, OplogApplier, ormTarget } from '../../../src/data/replication/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { MAX_SERVED_PER_PEER, Replication, REPLICATION_SERVICE } from '../../../src/nodes/index.js';
import { testNode } from '../support.js';

const Note = defineModel('notes', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'lww' } });

let dir: string;
const dbs: Database[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-hostile-'));
});
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function replicated(name: string) {
  const node = await testNode(name);
  const db = await openSqlite(node.system, { file: join(dir, `${name}.db`) });
  dbs.push(db);
  const oplog = await Oplog.open(db, { instance: node.name });
  const orm = new Orm(db, { oplog });
  await orm.createTables(Note);
  const replication = await Replication.start(node, { source: oplog, sink: new OplogApplier(oplog, { targets: [ormTarget(db, Note)] }), retryMinMs: 20, retryMaxMs: 200 });
  return { node, db, orm, oplog, replication };
}

const rows = async (db: Database) => (await db.query<{ id: bigint; body: string }>('SELECT id, body FROM notes ORDER BY id')).rows.map((row) => [Number(row.id), row.body]);

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const entry = (seq: number, instance: string, id: number, body: string) => ({
  seq,
  instance,
  ts: `${(Date.now()).toString(16).padStart(12, '0')}.0000`,
  model: 'notes',
  key: String(id),
  op: 'upsert',
  version: 0,
  data: { id: BigInt(id), body, version: 0n },
});

describe('a hostile replication peer', () => {
  it('cannot make a node apply writes it claims for another node, nor crash it', async () => {
    const a = await replicated('a');
    const b = await replicated('b');
    const evil = await replicated('evil');
    await a.node.connect(b.node.name);
    await evil.node.connect(b.node.name);
    await until(() => b.replication.stats().peers.length === 2);

    const say = (...message: unknown[]) => evil.node.sendNamed(REPLICATION_SERVICE, b.node.name, message);
    // Entries that claim to be a's writes, pushed by evil in its own name.
    say('push', evil.node.name, [entry(1, a.node.name, 1, 'forged for a')], 1);
    // A push that names a as its sender (over evil's link).
    say('push', a.node.name, [entry(1, a.node.name, 2, 'forged sender')], 1);
    // Malformed batches: not an array, entries of the wrong shape, too many entries.
    say('push', evil.node.name, 'not entries', 1);
    say('push', evil.node.name, [{ seq: 'x' }], 1);
    say('push', evil.node.name, Array.from({ length: 501 }, (_, i) => entry(i + 1, evil.node.name, 1_000 + i, 'flood')), 501);
    say('wake', evil.node.name, -5);
    // A flood of pulls at once: at most MAX_SERVED_PER_PEER are served, the rest answered BUSY.
    const pulls = await Promise.all(Array.from({ length: 20 }, () => evil.node.callNamed(REPLICATION_SERVICE, b.node.name, ['pull', evil.node.name, 0], 5_000)));
    expect(pulls.filter((answer) => (answer as { failed?: string }).failed === 'BUSY').length).toBeGreaterThanOrEqual(20 - MAX_SERVED_PER_PEER);
    // A snapshot page asked with a malformed cursor.
    expect(await evil.node.callNamed(REPLICATION_SERVICE, b.node.name, ['snapshot', evil.node.name, { model: 7 }], 5_000)).toEqual({ failed: 'MALFORMED' });

    // Honest traffic still flows, and nothing forged landed.
    await a.orm.insert(Note, { id: 10n, body: 'from a' });
    await evil.orm.insert(Note, { id: 20n, body: 'evil, in its own name' });
    await until(async () => (await rows(b.db)).length === 2);
    expect(await rows(b.db)).toEqual([
      [10, 'from a'],
      [20, 'evil, in its own name'],
    ]);
    expect(b.replication.stats().malformed).toBeGreaterThanOrEqual(4);
    expect(b.replication.stats().forged).toMatchObject({ push: 1 });
    expect(b.node.system.stopped).toBe(false);
  }, 30_000);
});

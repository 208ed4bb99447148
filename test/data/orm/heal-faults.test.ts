/**
 * The fault-injection suite (validation step 7 of 04-data.md) through the real ORM and the real
 * servers: the schema is damaged behind the ORM's back, a write heals it, with a journal record
 * (ledger row and file) written first and exactly one retry.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { DbError, HealFailed, NarrowingRefused, type Database } from '../../../src/data/index.js';
import { Healer, type HealRecord } from '../../../src/data/orm/heal/index.js';
import { defineModel, field, Orm, sql } from '../../../src/data/orm/index.js';
import { checksumOf, readLedger } from '../../../src/data/orm/migrations/index.js';
import { introspect } from '../../../src/data/orm/schema/index.js';
import { Syncer } from '../../../src/data/orm/sync.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';
import { memoryLogger, recording, tempDir, type Recording } from './schema-support.js';

const Item = defineModel(
  'items',
  {
    id: field.int64().primaryKey().autoIncrement(),
    sku: field.string(20),
    qty: field.int64(),
    note: field.text().nullable(),
  },
  { indexes: [{ columns: ['sku'] }] },
);

describe.each(BACKENDS)('heals on $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let db: Database;
  let rec: Recording;
  let journal: ReturnType<typeof tempDir>;
  let healer: Healer;
  let orm: Orm;
  let log: ReturnType<typeof memoryLogger>;
  const pgOnly = backend.name === 'postgres' ? it : it.skip;

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    db = opened.db;
    journal = tempDir('molo-heal-');
    rec = recording(db);
    log = memoryLogger();
    healer = new Healer({ db: rec.db, models: [Item], journalDir: journal.path, logger: log.logger });
    orm = new Orm(rec.db, { healer });
    await new Syncer(db, { models: [Item] }).sync();
    // Not the column set the tests insert with: a statement the driver has already prepared keeps its
    // old parameter and result types after ALTER COLUMN TYPE (see docs/schema.md, "Prepared statements").
    await orm.insert(Item, { sku: 'first', qty: 1n, note: null });
    rec.clear();
  });

  afterEach(async () => {
    await opened.dispose();
    system.shutdown();
    journal.remove();
  });

  const inserts = (): string[] => rec.statements.filter((sql) => /^INSERT INTO "items"/.test(sql));

  /** The one journaled heal: its ledger row and its file match the record. */
  async function expectJournaled(record: HealRecord, trigger: string): Promise<void> {
    expect(record.applied).toBe(true);
    expect(record.triggerCode).toBe(trigger);
    const rows = await readLedger(db, 'heal');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: record.id, kind: 'heal', checksum: record.checksum, triggerCode: trigger });
    expect(rows[0]!.sql).toBe(record.sql.map((sql) => `${sql};`).join('\n'));
    expect(record.checksum).toBe(checksumOf(rows[0]!.sql));
    expect(record.file!.startsWith(journal.path)).toBe(true);
    const text = readFileSync(record.file!, 'utf8');
    expect(text).toContain(`-- trigger: ${trigger}`);
    expect(text).toContain(`-- checksum: sha256:${record.checksum}`);
    expect(text).toContain(`-- at: ${record.at.toISOString()}`);
    expect(text).toContain(rows[0]!.sql);
  }

  /** The heal record the healer returned last (the ORM does not hand it out on success). */
  async function lastRecord(): Promise<HealRecord> {
    const line = log.lines.filter((l) => l.fields['event'] === 'orm.heal.applied').at(-1);
    expect(line, 'a heal was applied').toBeDefined();
    const rows = await readLedger(db, 'heal');
    const row = rows.find((r) => r.id === line!.fields['id'])!;
    return {
      id: row.id,
      backend: db.backend,
      table: line!.fields['table'] as string,
      plan: line!.fields['plan'] as HealRecord['plan'],
      sql: line!.fields['sql'] as string[],
      reason: row.reason!,
      triggerCode: row.triggerCode!,
      at: row.appliedAt,
      checksum: row.checksum,
      file: line!.fields['file'] as string,
      applied: true,
    };
  }

  it('a dropped column: the write adds it back, journals first, retries once', async () => {
    await db.query('ALTER TABLE items DROP COLUMN note');
    const row = await orm.insert(Item, { sku: 'second', qty: 2n, note: 'hello' });
    expect(row).toMatchObject({ sku: 'second', qty: 2n, note: 'hello' });
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('addColumn');
    await expectJournaled(record, backend.name === 'postgres' ? '42703' : 'SQLITE_ERROR');
    // Journal before DDL: the ledger insert precedes the ALTER.
    const ledgerAt = rec.statements.findIndex((sql) => sql.startsWith('INSERT INTO schema_migrations'));
    const alterAt = rec.statements.findIndex((sql) => /^ALTER TABLE "items" ADD COLUMN "note"/.test(sql));
    expect(ledgerAt).toBeGreaterThan(-1);
    expect(alterAt).toBeGreaterThan(ledgerAt);
    expect((await orm.query(Item).orderBy('id').all()).map((r) => r.note)).toEqual([null, 'hello']);
  });

  it('a dropped table: the write creates it, journals first, retries once', async () => {
    await db.query('DROP TABLE items');
    const row = await orm.insert(Item, { sku: 'again', qty: 3n });
    expect(row.sku).toBe('again');
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('createTable');
    await expectJournaled(record, backend.name === 'postgres' ? '42P01' : 'SQLITE_ERROR');
    expect((await introspect(db)).tables.get('items')!.indexes.some((index) => index.name === 'items_sku_idx')).toBe(true);
  });

  it('a read of a dropped table heals too', async () => {
    await db.query('DROP TABLE items');
    expect(await orm.query(Item).all()).toEqual([]);
    expect((await lastRecord()).plan).toBe('createTable');
  });

  pgOnly('a shortened varchar widens (x4, at least the model length) and the write succeeds', async () => {
    await db.query('ALTER TABLE items ALTER COLUMN sku TYPE varchar(5)');
    const row = await orm.insert(Item, { sku: 'fifteen-chars-x', qty: 4n });
    expect(row.sku).toBe('fifteen-chars-x');
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('widenVarchar');
    expect(record.sql).toEqual(['ALTER TABLE "items" ALTER COLUMN "sku" TYPE varchar(20)']);
    await expectJournaled(record, '22001');
    expect((await introspect(db, ['items'])).tables.get('items')!.columns.find((c) => c.name === 'sku')!.type).toBe('varchar(20)');
    // Under the advisory lock, with a lock timeout.
    expect(rec.statements.some((sql) => sql.includes('pg_advisory_xact_lock'))).toBe(true);
    expect(rec.statements.some((sql) => sql.includes("set_config('lock_timeout'"))).toBe(true);
  });

  pgOnly('an int narrowed to int4 under an int64 model widens to bigint', async () => {
    await db.query('ALTER TABLE items ALTER COLUMN qty TYPE integer');
    const row = await orm.insert(Item, { sku: 'big', qty: 5_000_000_000n });
    expect(row.qty).toBe(5_000_000_000n);
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('widenInt');
    expect(record.sql).toEqual(['ALTER TABLE "items" ALTER COLUMN "qty" TYPE bigint']);
    await expectJournaled(record, '22003');
  });

  it('a NOT NULL the model no longer has is dropped (SQLite: the 12-step rebuild), keeping rows and indexes', async () => {
    if (backend.name === 'postgres') {
      await db.query("UPDATE items SET note = 'kept'");
      await db.query('ALTER TABLE items ALTER COLUMN note SET NOT NULL');
    } else {
      // SQLite cannot add NOT NULL in place either: build the table as an older model had it.
      await db.query('DROP TABLE items');
      await db.query('CREATE TABLE items ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "sku" TEXT NOT NULL, "qty" INTEGER NOT NULL, "note" TEXT NOT NULL DEFAULT \'n/a\')');
      await db.query('CREATE INDEX items_sku_idx ON items (sku)');
      await db.query("INSERT INTO items (id, sku, qty, note) VALUES (7, 'first', 1, 'kept')");
      await db.query('DELETE FROM items WHERE id = 7');
      await db.query("INSERT INTO items (id, sku, qty, note) VALUES (3, 'first', 1, 'kept')");
    }
    await db.query("UPDATE items SET note = 'kept'");
    // The ORM binds NULL for a nullable column left out.
    const row = await orm.insert(Item, { sku: 'no-note', qty: 6n, note: null });
    expect(row.note).toBeNull();
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('dropNotNull');
    await expectJournaled(record, backend.name === 'postgres' ? '23502' : 'SQLITE_CONSTRAINT_NOTNULL');
    const table = (await introspect(db, ['items'])).tables.get('items')!;
    expect(table.columns.find((c) => c.name === 'note')!.nullable).toBe(true);
    expect(table.indexes.some((index) => index.name === 'items_sku_idx')).toBe(true);
    expect((await orm.query(Item).orderBy('id').all()).map((r) => r.note)).toEqual(['kept', null]);
    if (backend.name === 'sqlite') {
      expect(record.sql[0]).toMatch(/^CREATE TABLE "molo_rebuild_items"/);
      expect(rec.statements).toEqual(expect.arrayContaining(['PRAGMA foreign_keys=OFF', 'BEGIN IMMEDIATE', 'PRAGMA foreign_key_check', 'COMMIT', 'PRAGMA foreign_keys=ON']));
      expect((await db.query<{ foreign_keys: number }>('PRAGMA foreign_keys')).rows[0]!.foreign_keys).toBe(1);
      // AUTOINCREMENT's high-water mark survived the rebuild: id 7 is never handed out again... nor anything below 8.
      expect(row.id).toBeGreaterThan(7n);
    }
  });

  it('concurrent writes into a dropped table: one heal, the others find it done; counted in metrics', async () => {
    const registry = new Registry();
    const counted = new Healer({ db: rec.db, models: [Item], journalDir: journal.path, metrics: registry });
    const ormCounted = new Orm(rec.db, { healer: counted });
    await db.query('DROP TABLE items');
    const rows = await Promise.all([1, 2, 3].map((n) => ormCounted.insert(Item, { sku: `c${n}`, qty: BigInt(n) })));
    expect(rows.map((row) => row.sku).sort()).toEqual(['c1', 'c2', 'c3']);
    expect(await readLedger(db, 'heal')).toHaveLength(1);
    expect(readdirSync(journal.path)).toHaveLength(1);
    const metric = await registry.getSingleMetric('molo_orm_heals_total')!.get();
    const byResult = Object.fromEntries(metric.values.map((v) => [`${v.labels['plan']}:${v.labels['result']}`, v.value]));
    expect(byResult['createTable:applied']).toBe(1);
    // The other two each retried after finding the table there (or never failed, if they ran after the heal).
    expect((byResult['createTable:skipped'] ?? 0) + 1).toBe(inserts().length - 3);
  });

  it('options outside their range are refused naming the option', () => {
    expect(() => new Healer({ db, lockTimeoutMs: 0 })).toThrow(/healer\.lockTimeoutMs/);
    expect(() => new Healer({ db, maxHealsPerMinute: 10_001 })).toThrow(/healer\.maxHealsPerMinute/);
    expect(() => new Healer({ db, textThreshold: 20_000_000 })).toThrow(/healer\.textThreshold/);
  });

  it('heals are bounded per minute; beyond, errors propagate unhealed', async () => {
    const stingy = new Healer({ db: rec.db, models: [Item], journalDir: journal.path, maxHealsPerMinute: 1 });
    const ormStingy = new Orm(rec.db, { healer: stingy });
    await db.query('ALTER TABLE items DROP COLUMN note');
    await ormStingy.insert(Item, { sku: 'healed', qty: 1n, note: 'n' });
    await db.query('DROP TABLE items');
    await expect(ormStingy.insert(Item, { sku: 'not healed', qty: 1n })).rejects.toBeInstanceOf(DbError);
    expect(await readLedger(db, 'heal')).toHaveLength(1);
  });

  it('a NOT NULL column the model no longer has at all is relaxed the same way', async () => {
    if (backend.name === 'postgres') {
      await db.query("ALTER TABLE items ADD COLUMN legacy text NOT NULL DEFAULT 'old'");
      await db.query('ALTER TABLE items ALTER COLUMN legacy DROP DEFAULT');
    } else {
      await db.query("ALTER TABLE items ADD COLUMN legacy TEXT NOT NULL DEFAULT 'old'");
      // SQLite cannot drop a default in place either; rebuild by hand without it, as an older deploy left it.
      await db.query('CREATE TABLE items2 ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "sku" TEXT NOT NULL, "qty" INTEGER NOT NULL, "note" TEXT, legacy TEXT NOT NULL)');
      await db.query('INSERT INTO items2 SELECT id, sku, qty, note, legacy FROM items');
      await db.query('DROP TABLE items');
      await db.query('ALTER TABLE items2 RENAME TO items');
    }
    const row = await orm.insert(Item, { sku: 'modern', qty: 1n, note: null });
    expect(row.sku).toBe('modern');
    expect(inserts()).toHaveLength(2);
    const record = await lastRecord();
    expect(record.plan).toBe('dropNotNull');
    await expectJournaled(record, backend.name === 'postgres' ? '23502' : 'SQLITE_CONSTRAINT_NOTNULL');
    expect((await db.query('SELECT legacy FROM items ORDER BY id')).rows).toEqual([{ legacy: 'old' }, { legacy: null }]);
  });

  it('narrowing is refused with a typed error, and nothing changes', async () => {
    const narrower = backend.name === 'postgres' ? 'varchar(10)' : 'INTEGER';
    const error = await healer.widenColumn('items', 'sku', narrower).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NarrowingRefused);
    expect(error).toMatchObject({ code: 'ORM_NARROWING_REFUSED', table: 'items', column: 'sku', to: narrower });
    await expect(healer.widenColumn('items', 'qty', backend.name === 'postgres' ? 'integer' : 'TEXT')).rejects.toBeInstanceOf(NarrowingRefused);
    expect(rec.ddl()).toEqual([]);
    expect(await readLedger(db, 'heal')).toEqual([]);
    if (backend.name === 'postgres') {
      // A real widening through the same door is journaled like a heal.
      const widened = await healer.widenColumn('items', 'sku', 'varchar(64)');
      await expectJournaled(widened, 'manual');
    }
  });

  it('a second failure propagates with the heal record attached', async () => {
    await db.query('ALTER TABLE items DROP COLUMN note');
    const [first] = await orm.query(Item).select('id').all();
    // Missing column first; once healed, the retry hits the primary key.
    const error = await orm.insert(Item, { id: first!.id, sku: 'dup', qty: 1n, note: 'x' } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DbError);
    expect((error as DbError).sqlstate ?? (error as DbError).sqliteCode).toBe(backend.name === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_PRIMARYKEY');
    const record = (error as { healRecord?: HealRecord }).healRecord;
    expect(record).toBeDefined();
    expect(record!.plan).toBe('addColumn');
    expect(inserts()).toHaveLength(2);
    await expectJournaled(record!, backend.name === 'postgres' ? '42703' : 'SQLITE_ERROR');
  });

  it('inside a transaction the heal happens in the same transaction (Postgres: after rolling back to the savepoint)', async () => {
    await db.query('ALTER TABLE items DROP COLUMN note');
    await orm.transaction(async (tx) => {
      await tx.insert(Item, { sku: 'before', qty: 1n });
      await tx.insert(Item, { sku: 'healed', qty: 2n, note: 'in tx' });
      await tx.insert(Item, { sku: 'after', qty: 3n, note: 'still in tx' });
    });
    expect((await orm.query(Item).orderBy('id').all()).map((r) => [r.sku, r.note])).toEqual([
      ['first', null],
      ['before', null],
      ['healed', 'in tx'],
      ['after', 'still in tx'],
    ]);
    if (backend.name === 'postgres') {
      expect(rec.statements).toEqual(expect.arrayContaining([expect.stringMatching(/^SAVEPOINT molo_heal_/), expect.stringMatching(/^ROLLBACK TO SAVEPOINT molo_heal_/)]));
    }
    await expectJournaled(await lastRecord(), backend.name === 'postgres' ? '42703' : 'SQLITE_ERROR');
  });

  it('a transaction that rolls back takes its heal with it', async () => {
    await db.query('ALTER TABLE items DROP COLUMN note');
    await expect(
      orm.transaction(async (tx) => {
        await tx.insert(Item, { sku: 'healed', qty: 2n, note: 'in tx' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // DDL is transactional on both backends: the column and the ledger row are gone again.
    expect((await introspect(db, ['items'])).tables.get('items')!.columns.map((c) => c.name)).not.toContain('note');
    expect(await readLedger(db, 'heal')).toEqual([]);
  });

  it('errors outside the heal matrix are not healed and journal nothing', async () => {
    const [first] = await orm.query(Item).select('id').all();
    await expect(orm.insert(Item, { id: first!.id, sku: 'dup', qty: 1n } as never)).rejects.toBeInstanceOf(DbError);
    await expect(orm.execute(sql`SELECT * FROM no_model_owns_this`)).rejects.toBeInstanceOf(DbError);
    expect(inserts()).toHaveLength(1);
    expect(await readLedger(db, 'heal')).toEqual([]);
    expect(existsSync(journal.path) ? readdirSync(journal.path) : []).toEqual([]);
  });

  pgOnly('a heal whose DDL cannot get its lock in time propagates HealFailed with the original error', async () => {
    await db.query('ALTER TABLE items DROP COLUMN note');
    const impatient = new Healer({ db: rec.db, models: [Item], journalDir: journal.path, lockTimeoutMs: 50, lockRetries: 1 });
    const ormImpatient = new Orm(rec.db, { healer: impatient });
    // Another session reads the table in an open transaction: ALTER TABLE waits for it, past lock_timeout (55P03), twice.
    await db.session(async (s) => {
      await s.query('BEGIN');
      await s.query('LOCK TABLE items IN ACCESS SHARE MODE');
      const error = await ormImpatient.insert(Item, { sku: 'x', qty: 1n, note: 'y' }).catch((e: unknown) => e);
      await s.query('ROLLBACK');
      expect(error).toBeInstanceOf(HealFailed);
      expect((error as HealFailed).sqlstate).toBe('55P03');
      expect(((error as HealFailed).original as DbError).sqlstate).toBe('42703');
    });
    expect(rec.statements.filter((text) => /^ALTER TABLE "items" ADD COLUMN/.test(text))).toHaveLength(2);
    // Rolled back: no ledger row, and the file written first is gone again.
    expect(await readLedger(db, 'heal')).toEqual([]);
    expect(readdirSync(journal.path)).toEqual([]);
    // Once the reader is gone, the next write heals.
    expect((await ormImpatient.insert(Item, { sku: 'x', qty: 1n, note: 'y' })).note).toBe('y');
    expect(readdirSync(journal.path)).toHaveLength(1);
  });
});

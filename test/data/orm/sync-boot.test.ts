/**
 * The Syncer on both servers: a fresh database boots to the full schema, a second sync issues no
 * DDL at all, a model that grows gets its columns and indexes (rows kept), and the boot policy
 * (syncOnBoot true: a failure throws; false: a loud warning and degraded health).
 */
import { describe, expect, it } from 'vitest';
import { SchemaSyncFailed, type Database } from '../../../src/data/index.js';
import { defineModel, dialectFor, field, NOW, Orm } from '../../../src/data/orm/index.js';
import { diffModel, introspect } from '../../../src/data/orm/schema/index.js';
import { Syncer } from '../../../src/data/orm/sync.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { memoryLogger, recording } from './schema-support.js';

const User = defineModel('users', {
  id: field.int64().primaryKey().autoIncrement(),
  email: field.string(120).unique(),
  name: field.text().nullable(),
});

const Post = defineModel(
  'posts',
  {
    id: field.int64().primaryKey().autoIncrement(),
    authorId: field.int64().index(),
    slug: field.string(80),
    title: field.text(),
    publishedAt: field.time().nullable(),
  },
  { uniques: [['authorId', 'slug']] },
);

const Tag = defineModel('tags', { postId: field.int64(), label: field.string(40) }, { primaryKey: ['postId', 'label'] });

/** The same users table, grown: new columns of every awkward sort, a new index and a unique. */
const UserV2 = defineModel(
  'users',
  {
    id: field.int64().primaryKey().autoIncrement(),
    email: field.string(120).unique(),
    name: field.text().nullable(),
    nickname: field.string(30).nullable().index(),
    plan: field.string(20).default('free'),
    karma: field.int32(),
    joinedAt: field.time().default(NOW),
    handle: field.string(40).nullable().unique(),
  },
  { indexes: [{ columns: ['plan', 'karma'] }] },
);

describe.each(BACKENDS)('sync on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, (opened) => {
    db = opened.db;
  });

  it('boots a fresh database to the full schema, and a second sync issues no DDL', async () => {
    const rec = recording(db);
    const syncer = new Syncer(rec.db, { models: [User, Post, Tag] });
    const report = await syncer.boot();
    const dialect = dialectFor(db.backend);
    const expected = [User, Post, Tag].flatMap((model) => dialect.createTableStatements(model.meta));
    expect(rec.ddl()).toEqual(expected);
    expect(report!.statements).toBe(expected.length);
    expect(report!.applied.map((plan) => plan.table)).toEqual(['users', 'posts', 'tags']);
    const snapshot = await introspect(db);
    for (const model of [User, Post, Tag]) expect(diffModel(model.meta, snapshot, dialect)).toMatchObject({ exists: true, changes: [], drift: [] });

    rec.clear();
    const again = await syncer.sync();
    expect(again.statements).toBe(0);
    expect(again.applied).toEqual([]);
    expect(rec.ddl()).toEqual([]);
    // Only the introspection reads: no transaction, no lock, nothing else.
    expect(rec.statements).toHaveLength(3);
    expect(rec.statements.every((sql) => /^\s*SELECT/i.test(sql))).toBe(true);
    expect(syncer.health()).toEqual({ healthy: true });
  });

  it('adds the columns and indexes a grown model declares, keeping the rows', async () => {
    await new Syncer(db, { models: [User] }).sync();
    const orm = new Orm(db);
    const alice = await orm.insert(User, { email: 'alice@example.com', name: 'Alice' });

    const rec = recording(db);
    const report = await new Syncer(rec.db, { models: [UserV2] }).sync();
    expect(report.applied.map((plan) => plan.table)).toEqual(['users']);
    const plan = report.applied[0]!;
    expect(plan.changes.map((c) => (c.kind === 'addColumn' ? `+${c.column}` : c.kind === 'createIndex' ? `#${c.index}` : c.kind))).toEqual([
      '+nickname',
      '+plan',
      '+karma',
      '+joinedAt',
      '+handle',
      '#users_handle_key',
      '#users_nickname_idx',
      '#users_plan_karma_idx',
    ]);
    // karma is NOT NULL without a default and the table has a row: added nullable, reported as relaxed / nullable in the database.
    expect(report.drift).toEqual(expect.arrayContaining([expect.objectContaining({ column: 'karma', kind: 'relaxed', wanted: 'notNull' })]));

    const row = await new Orm(db).find(UserV2, alice.id);
    expect(row).toMatchObject({ email: 'alice@example.com', name: 'Alice', nickname: null, plan: 'free', karma: null, handle: null });
    expect(row!.joinedAt).toBeInstanceOf(Date);
    // On SQLite the NOW default cannot go through ADD COLUMN: the table was rebuilt (the 12-step procedure).
    if (db.backend === 'sqlite') expect(rec.statements.some((sql) => /^CREATE TABLE "molo_rebuild_users"/.test(sql))).toBe(true);

    const after = diffModel(UserV2.meta, await introspect(db), dialectFor(db.backend));
    expect(after.changes).toEqual([]);
    rec.clear();
    expect((await new Syncer(rec.db, { models: [UserV2] }).sync()).statements).toBe(0);
    expect(rec.ddl()).toEqual([]);
  });

  it('a NOT NULL column without default is added NOT NULL to an empty table on Postgres', async () => {
    await new Syncer(db, { models: [User] }).sync();
    await new Syncer(db, { models: [UserV2] }).sync();
    const karma = (await introspect(db, ['users'])).tables.get('users')!.columns.find((c) => c.name === 'karma')!;
    expect(karma.nullable).toBe(db.backend === 'sqlite');
  });

  it('a failing sync aborts the boot with SchemaSyncFailed naming the table', async () => {
    const Broken = defineModel('broken', { id: field.int32().primaryKey(), n: field.int32().check('no_such_column > 0') });
    const syncer = new Syncer(db, { models: [User, Broken] });
    const error = await syncer.boot().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaSyncFailed);
    expect((error as SchemaSyncFailed).table).toBe('broken');
    expect((error as SchemaSyncFailed).code).toBe('ORM_SCHEMA_SYNC_FAILED');
    // The table before it was created in its own transaction; the broken one left nothing behind.
    const tables = [...(await introspect(db)).tables.keys()];
    expect(tables).toContain('users');
    expect(tables).not.toContain('broken');
  });

  it('syncOnBoot: false applies nothing, warns loudly and reports degraded health until a sync', async () => {
    const { logger, lines } = memoryLogger();
    const rec = recording(db);
    const syncer = new Syncer(rec.db, { models: [User, Post], syncOnBoot: false, logger });
    expect(await syncer.boot()).toBeUndefined();
    expect(rec.ddl()).toEqual([]);
    const health = syncer.health();
    expect(health.healthy).toBe(false);
    expect(health.reason).toMatch(/table users missing; table posts missing/);
    const warning = lines.find((line) => line.level === 'warn' && line.fields['event'] === 'orm.sync.degraded');
    expect(warning?.msg).toMatch(/^SCHEMA OUT OF SYNC/);

    await syncer.sync();
    expect(syncer.health()).toEqual({ healthy: true });
    // In line now: a boot with syncOnBoot false is healthy.
    await syncer.boot();
    expect(syncer.health()).toEqual({ healthy: true });
  });

  it('two processes syncing at once create each table once', async () => {
    const a = new Syncer(db, { models: [User, Post, Tag] });
    const b = new Syncer(db, { models: [User, Post, Tag] });
    const [ra, rb] = await Promise.all([a.sync(), b.sync()]);
    const dialect = dialectFor(db.backend);
    const expected = [User, Post, Tag].flatMap((model) => dialect.createTableStatements(model.meta)).length;
    expect(ra.statements + rb.statements).toBe(expected);
  });
});

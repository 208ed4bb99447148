/**
 * Introspection on both servers: what the dialect creates reads back as the model says, and tables
 * written by hand with other spellings of the same types diff to nothing (no DDL, no type drift).
 */
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/data/index.js';
import { defineModel, dialectFor, field, NOW } from '../../../src/data/orm/index.js';
import { diffModel, introspect, normalizeType } from '../../../src/data/orm/schema/index.js';
import { Syncer } from '../../../src/data/orm/sync.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { recording } from './schema-support.js';

const Account = defineModel(
  'accounts',
  {
    id: field.int64().primaryKey().autoIncrement(),
    email: field.string(120).unique(),
    name: field.text().nullable().index(),
    createdAt: field.time().default(NOW),
    score: field.int32().default(0),
    active: field.bool(),
    profile: field.json().nullable(),
    token: field.uuid(),
    avatar: field.bytes().nullable(),
    ratio: field.double(),
  },
  { indexes: [{ columns: ['score', 'active'] }] },
);

describe.each(BACKENDS)('introspection on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, (opened) => {
    db = opened.db;
  });

  it('reads back the columns, keys, uniques and indexes the dialect created', async () => {
    const dialect = dialectFor(db.backend);
    for (const sql of dialect.createTableStatements(Account.meta)) await db.query(sql);
    const snapshot = await introspect(db);
    const table = snapshot.tables.get('accounts')!;
    expect(table.columns.map((c) => c.name)).toEqual(Account.meta.columns.map((c) => c.name));
    for (const col of Account.meta.columns) {
      const actual = table.columns.find((c) => c.name === col.name)!;
      expect(actual.type, col.name).toBe(normalizeType(db.backend, dialect.columnType(col)));
      expect(actual.nullable, col.name).toBe(col.nullable);
    }
    expect(table.primaryKey).toEqual(['id']);
    expect(table.columns.find((c) => c.name === 'id')!.autoIncrement).toBe(true);
    expect(table.columns.find((c) => c.name === 'score')!.default).toBe('0');
    expect(table.columns.find((c) => c.name === 'createdAt')!.default).not.toBeNull();
    expect(table.uniques).toEqual(expect.arrayContaining([['email'], ['id']]));
    const named = table.indexes.filter((index) => !index.constraint).map((index) => ({ name: index.name, columns: index.columns, unique: index.unique }));
    expect(named).toEqual(
      expect.arrayContaining([
        { name: 'accounts_name_idx', columns: ['name'], unique: false },
        { name: 'accounts_score_active_idx', columns: ['score', 'active'], unique: false },
      ]),
    );
    expect(snapshot.indexNames.has('accounts_name_idx')).toBe(true);
    const plan = diffModel(Account.meta, snapshot, dialect);
    expect(plan.changes).toEqual([]);
    expect(plan.drift).toEqual([]);
    if (db.backend === 'sqlite') expect(table.createSql).toMatch(/^CREATE TABLE "accounts"/);
  });

  it('a table written by hand with other spellings of the same types diffs to nothing, and sync issues no DDL', async () => {
    const ddl =
      db.backend === 'postgres'
        ? [
            `CREATE TABLE accounts (id INT8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY, email CHARACTER VARYING (120) NOT NULL UNIQUE, name TEXT,
              "createdAt" TIMESTAMP (3) WITH TIME ZONE NOT NULL DEFAULT now(), score INT4 NOT NULL DEFAULT 0, active BOOL NOT NULL,
              profile JSONB, token UUID NOT NULL, avatar BYTEA, ratio FLOAT8 NOT NULL)`,
            'CREATE INDEX some_other_name ON accounts (name)',
            'CREATE UNIQUE INDEX stricter_than_needed ON accounts (score, active)',
          ]
        : [
            `CREATE TABLE accounts (id INTEGER PRIMARY KEY, email varchar(120) NOT NULL, name text, "createdAt" nvarchar(40) NOT NULL,
              score int NOT NULL DEFAULT 0, active tinyint NOT NULL, profile clob, token char(36) NOT NULL, avatar blob, ratio double NOT NULL)`,
            'CREATE UNIQUE INDEX email_unique ON accounts (email)',
            'CREATE INDEX some_other_name ON accounts (name)',
            'CREATE INDEX score_active ON accounts (score, active)',
          ];
    for (const sql of ddl) await db.query(sql);
    const plan = diffModel(Account.meta, await introspect(db), dialectFor(db.backend));
    expect(plan.changes).toEqual([]);
    expect(plan.drift.filter((d) => d.kind.startsWith('type-'))).toEqual([]);

    const rec = recording(db);
    const report = await new Syncer(rec.db, { models: [Account] }).sync();
    expect(report.statements).toBe(0);
    expect(rec.ddl()).toEqual([]);
  });

  it('reports real differences as drift and leaves them alone', async () => {
    const narrow = db.backend === 'postgres' ? 'varchar(20)' : 'TEXT';
    await db.query(
      `CREATE TABLE accounts (id ${db.backend === 'postgres' ? 'bigint' : 'INTEGER'} PRIMARY KEY, email ${narrow} NOT NULL, name TEXT NOT NULL, legacy TEXT,
        "createdAt" ${db.backend === 'postgres' ? 'timestamptz(3)' : 'TEXT'} NOT NULL, score INTEGER, active ${db.backend === 'postgres' ? 'boolean' : 'INTEGER'} NOT NULL,
        profile ${db.backend === 'postgres' ? 'jsonb' : 'TEXT'}, token ${db.backend === 'postgres' ? 'uuid' : 'TEXT'} NOT NULL, avatar ${db.backend === 'postgres' ? 'bytea' : 'BLOB'},
        ratio ${db.backend === 'postgres' ? 'double precision' : 'REAL'} NOT NULL)`,
    );
    await db.query(`CREATE INDEX partial_name ON accounts (name) WHERE name <> ''`);
    const plan = diffModel(Account.meta, await introspect(db), dialectFor(db.backend));
    const kinds = plan.drift.map((d) => `${d.kind}:${d.column ?? ''}`).sort();
    expect(kinds).toEqual(
      [...(db.backend === 'postgres' ? ['type-narrower:email'] : []), 'extra-column:legacy', 'not-null-in-db:name', 'nullable-in-db:score'].sort(),
    );
    // The partial index enforces nothing table-wide and covers only some rows: the model's indexes and unique are still created.
    expect(plan.changes.map((c) => (c.kind === 'createIndex' ? c.index : c.kind))).toEqual(['accounts_email_key', 'accounts_name_idx', 'accounts_score_active_idx']);
  });

  it('introspects only the tables asked for', async () => {
    await db.query('CREATE TABLE a (x INTEGER PRIMARY KEY)');
    await db.query('CREATE TABLE b (y INTEGER PRIMARY KEY)');
    const snapshot = await introspect(db, ['b', 'missing']);
    expect([...snapshot.tables.keys()]).toEqual(['b']);
  });
});

/**
 * The healer hook on both backends: every ORM statement that fails is offered to `healer.heal`;
 * with a record back it is retried once, and a second failure carries the record. Inside a Postgres
 * transaction the statement runs behind a savepoint, so the heal and the retry happen in the same,
 * still usable, transaction. (The schema helper's real Healer plugs into the same hook; here a
 * minimal one creates a missing table with the dialect's DDL.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { DbError } from '../../../src/data/index.js';
import { defineModel, field, Orm, type HealContext, type OrmHealer } from '../../../src/data/orm/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS } from '../backends.js';
import { CountingDatabase } from './core-support.js';
import type { OpenedBackend } from '../backends.js';

const Item = defineModel('heal_items', { id: field.int32().primaryKey(), label: field.text() });

/** Creates the model's table when the error says it is missing; records what it did. */
class CreateMissingTable implements OrmHealer<{ sql: string; reason: string }> {
  readonly calls: { sql: string; inTransaction: boolean }[] = [];
  constructor(private readonly breakAgain = false) {}
  async heal(error: unknown, context: HealContext): Promise<{ sql: string; reason: string } | undefined> {
    this.calls.push({ sql: context.sql, inTransaction: context.inTransaction });
    const missing = error instanceof DbError && (error.sqlstate === '42P01' || /no such table/.test(error.message));
    if (!missing || context.model.table === '') return undefined;
    const ddl = `CREATE TABLE "${context.model.table}" (id integer PRIMARY KEY, label text NOT NULL)`;
    if (!this.breakAgain) await context.db.query(ddl);
    return { sql: ddl, reason: 'undefined table' };
  }
}

describe.each(BACKENDS)('ORM healer hook on $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let counting: CountingDatabase;

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    counting = new CountingDatabase(opened.db);
  });

  afterEach(async () => {
    await opened.dispose();
    await system.shutdown();
  });

  it('heals outside a transaction and retries the statement once', async () => {
    const healer = new CreateMissingTable();
    const orm = new Orm(counting, { healer });
    const item = await orm.insert(Item, { id: 1, label: 'a' });
    expect(item).toEqual({ id: 1, label: 'a' });
    expect(healer.calls).toHaveLength(1);
    expect(healer.calls[0]!.inTransaction).toBe(false);
    expect(counting.statements.filter((s) => s.startsWith('INSERT'))).toHaveLength(2);
  });

  it('heals inside a transaction: behind a savepoint on Postgres, and the transaction commits', async () => {
    const healer = new CreateMissingTable();
    const orm = new Orm(counting, { healer });
    await orm.transaction(async (tx) => {
      await tx.insert(Item, { id: 1, label: 'a' });
      await tx.insert(Item, { id: 2, label: 'b' });
    });
    expect(healer.calls).toEqual([expect.objectContaining({ inTransaction: true })]);
    expect((await orm.query(Item).orderBy('id').all()).map((i) => i.label)).toEqual(['a', 'b']);
    const savepoints = counting.statements.filter((s) => s.startsWith('SAVEPOINT molo_heal_'));
    expect(savepoints.length).toBe(backend.name === 'postgres' ? 3 : 0);
    if (backend.name === 'postgres') expect(counting.statements).toContain('ROLLBACK TO SAVEPOINT molo_heal_0');
  });

  it('a second failure propagates with the heal record attached', async () => {
    const healer = new CreateMissingTable(true);
    const orm = new Orm(counting, { healer });
    const error = await orm.insert(Item, { id: 1, label: 'a' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DbError);
    expect(error).toMatchObject({ healRecord: { reason: 'undefined table' } });
    expect(healer.calls).toHaveLength(1);
  });

  it('an error the healer declines propagates unchanged, without a retry', async () => {
    const healer = new CreateMissingTable();
    const orm = new Orm(counting, { healer });
    await orm.createTables(Item);
    await orm.insert(Item, { id: 1, label: 'a' });
    counting.reset();
    const error = await orm.insert(Item, { id: 1, label: 'dup' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DbError);
    expect(error).not.toHaveProperty('healRecord');
    expect(counting.statements.filter((s) => s.startsWith('INSERT'))).toHaveLength(1);
  });
});

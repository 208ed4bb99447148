/**
 * CRUD through the ORM with identical assertions on Postgres and SQLite (real servers): inserts
 * with defaults, batch inserts past the parameter cap, find, update, delete, upsert, hooks, raw SQL,
 * injection strings stored literally, NUL refused.
 */
import { describe, expect, it } from 'vitest';
import { EncodeFailed, InvalidIdentifier, InvalidQuery, NotFound } from '../../../src/data/index.js';
import { defineModel, eq, field, Orm, sql, type RowOf } from '../../../src/data/orm/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { ormFixture, Post, Tag, User, type OrmFixture } from './core-support.js';

describe.each(BACKENDS)('ORM CRUD on $name', (backend) => {
  let fx: OrmFixture;
  let orm: Orm;
  openForEachTest(backend, async (opened) => {
    fx = await ormFixture(opened);
    orm = fx.orm;
  });

  it('inserts with server defaults and returns the stored row with the right JS types', async () => {
    const before = Date.now();
    const user = await orm.insert(User, { email: 'ada@example.com' });
    expect(typeof user.id).toBe('bigint');
    expect(user.id).toBe(1n);
    expect(user).toMatchObject({ email: 'ada@example.com', name: null, active: true });
    expect(user.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(user.createdAt.getTime() - before)).toBeLessThan(60_000);
    const again = await orm.find(User, 1n);
    expect(again).toEqual(user);
    expect(await orm.find(User, 99n)).toBeUndefined();
    await expect(orm.findOrThrow(User, 99n)).rejects.toBeInstanceOf(NotFound);
  });

  it('a model whose table was never created: the error says how to create it', async () => {
    const Missing = defineModel('never_created', { id: field.int64().primaryKey(), name: field.text() });
    const error = await orm.find(Missing, 1n).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'DB_QUERY_FAILED', retryable: false });
    expect((error as Error).message).toMatch(/never_created/);
    expect((error as Error).message).toMatch(/the Syncer or a migration \(docs\/schema\.md\), or orm\.createTables\(model\)/);
    expect((error as { hint?: string }).hint).toMatch(/createTables/);
  });

  it('sets the version column to 1 on insert', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    const post = await orm.insert(Post, { authorId: user.id, title: 'hello' });
    expect(post).toEqual({ id: 1n, authorId: 1n, title: 'hello', body: '', score: 0, version: 1n });
  });

  it('batch insert keeps the caller order and chunks past the 1,024-parameter cap', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    const rows = Array.from({ length: 700 }, (_, i) => ({ authorId: user.id, title: `t${i}`, score: i }));
    fx.counting.reset();
    const inserted = await orm.insertMany(Post, rows);
    expect(inserted.map((p) => p.title)).toEqual(rows.map((r) => r.title));
    expect(inserted.map((p) => p.id)).toEqual(rows.map((_, i) => BigInt(i + 1)));
    // 4 columns (authorId, title, score, version) → 256 rows per statement → 3 statements, in one transaction.
    const inserts = fx.counting.statements.filter((s) => s.startsWith('INSERT'));
    expect(inserts).toHaveLength(3);
    expect(fx.counting.statements[0]).toBe('BEGIN');
    expect(await orm.query(Post).count()).toBe(700);
    expect(await orm.insertMany(Post, [{ authorId: user.id, title: 'x' }], { returning: false })).toBe(1);
    expect(await orm.insertMany(Post, [])).toEqual([]);
  });

  it('a batch whose rows give different columns is still one ordered result', async () => {
    const inserted = await orm.insertMany(User, [{ email: 'a@x' }, { email: 'b@x', name: 'B' }, { email: 'c@x' }]);
    expect(inserted.map((u) => [u.email, u.name])).toEqual([
      ['a@x', null],
      ['b@x', 'B'],
      ['c@x', null],
    ]);
  });

  it('updates by primary key and deletes', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    const updated = await orm.update(User, user, { name: 'Ada', active: false });
    expect(updated).toEqual({ ...user, name: 'Ada', active: false });
    expect(await orm.find(User, user.id)).toEqual(updated);
    await expect(orm.update(User, { id: 42n }, { name: 'x' })).rejects.toBeInstanceOf(NotFound);
    await expect(orm.update(User, user, {})).rejects.toBeInstanceOf(InvalidQuery);
    expect(await orm.delete(User, user)).toBe(true);
    expect(await orm.delete(User, user)).toBe(false);
    expect(await orm.find(User, user.id)).toBeUndefined();
  });

  it('bulk update and delete through a query', async () => {
    await orm.insertMany(User, [{ email: 'a@x' }, { email: 'b@x' }, { email: 'c@x', active: false }]);
    expect(await orm.query(User).where({ active: true }).update({ name: 'on' })).toBe(2);
    const rows = await orm.query(User).where(eq(User.c.active, false)).update({ name: 'off' }, { returning: true });
    expect(rows.map((r) => r.email)).toEqual(['c@x']);
    expect((await orm.query(User).orderBy('email').all()).map((u) => u.name)).toEqual(['on', 'on', 'off']);
    expect(await orm.query(User).where({ name: 'on' }).delete()).toBe(2);
    expect(await orm.query(User).count()).toBe(1);
    await expect(orm.query(User).orderBy('id').delete()).rejects.toBeInstanceOf(InvalidQuery);
  });

  it('upserts on the primary key or a unique column, on both backends', async () => {
    const first = await orm.upsert(Tag, { label: 'red' }, { target: ['label'] });
    const again = await orm.upsert(Tag, { label: 'red' }, { target: ['label'] });
    expect(again.id).toBe(first.id);
    const user = await orm.upsert(User, { id: 7n, email: 'u@x', name: 'one' });
    const changed = await orm.upsert(User, { id: 7n, email: 'u@x', name: 'two' });
    expect(changed).toEqual({ ...user, name: 'two' });
    expect(await orm.query(User).count()).toBe(1);
  });

  it('runs hooks: beforeSave can change values, afterSave and afterDelete see the row, in the same transaction', async () => {
    const seen: string[] = [];
    const Note = defineModel(
      'notes',
      { id: field.int32().primaryKey().autoIncrement(), text: field.text(), slug: field.text().default('') },
      {
        hooks: {
          beforeSave: (values, ctx) => {
            seen.push(`before ${ctx.op}`);
            if (typeof values.text === 'string') return { ...values, slug: values.text.toLowerCase().replace(/\s+/g, '-') };
            return undefined;
          },
          afterSave: (row, ctx) => void seen.push(`after ${ctx.op} ${row.slug}`),
          afterDelete: (row, ctx) => void seen.push(`${ctx.op} ${row.id}`),
        },
      },
    );
    await orm.createTables(Note);
    const note = await orm.insert(Note, { text: 'Hello World' });
    expect(note.slug).toBe('hello-world');
    await orm.update(Note, note, { text: 'Bye Now' });
    await orm.delete(Note, note);
    expect(seen).toEqual(['before insert', 'after insert hello-world', 'before update', 'after update bye-now', `delete ${note.id}`]);
  });

  it('stores injection strings, quotes and backslashes literally', async () => {
    const nasty = ["'; DROP TABLE users; --", 'Robert"); DROP TABLE posts;--', "O'Brien \\' \\\\ \\n", '$1 $2 ?', '%_*?[', 'ünïcødé 🎉'];
    for (const [i, text] of nasty.entries()) {
      const user = await orm.insert(User, { email: `${i}@x`, name: text });
      expect((await orm.find(User, user.id))!.name).toBe(text);
      expect(await orm.query(User).where({ name: text }).count()).toBe(1);
    }
    expect(await orm.query(User).count()).toBe(nasty.length);
    const raw = await orm.execute<{ n: unknown }>(sql`SELECT count(*) AS n FROM ${sql.ident('users')} WHERE name = ${nasty[0]}`);
    expect(Number(raw.rows[0]!.n)).toBe(1);
  });

  it('refuses NUL in text with a typed error before anything is sent', async () => {
    fx.counting.reset();
    await expect(orm.insert(User, { email: 'a\0b@x' })).rejects.toBeInstanceOf(EncodeFailed);
    await expect(orm.query(User).where({ name: 'a\0' }).all()).rejects.toBeInstanceOf(EncodeFailed);
    expect(fx.counting.dataStatements).toEqual([]);
  });

  it('validates identifiers in sql.ident and refuses unknown columns', async () => {
    expect(() => sql.ident('a'.repeat(64))).toThrow(InvalidIdentifier);
    expect(() => sql.ident('bad\0name')).toThrow(InvalidIdentifier);
    expect(() => sql.ident('')).toThrow(InvalidIdentifier);
    await expect(orm.insert(User, { email: 'a@x', nope: 1 } as never)).rejects.toBeInstanceOf(InvalidQuery);
    expect(() => orm.query(User).where({ nope: 1 } as never)).toThrow(InvalidQuery);
    // A quote inside an identifier is quoted, not interpreted.
    const weird = await orm.execute<{ 'a"b': number }>(sql`SELECT 1 AS ${sql.ident('a"b')}`);
    expect(Number(weird.rows[0]!['a"b'])).toBe(1);
  });

  it('withContext: every statement, in and out of transactions, runs under the caller\'s context', async () => {
    const ctx = { correlationId: 'req-42', timeoutMs: 5_000 };
    const scoped = orm.withContext(ctx);
    fx.counting.reset();
    const user = await scoped.insert(User, { email: 'a@x' });
    await scoped.find(User, user.id);
    await scoped.query(User).where({ email: 'a@x' }).all();
    await scoped.transaction(async (tx) => {
      await tx.update(User, user, { name: 'n' });
    });
    expect(fx.counting.contexts.length).toBeGreaterThanOrEqual(5);
    expect(fx.counting.contexts.every((c) => c?.correlationId === 'req-42')).toBe(true);
  });

  it('row types are inferred from the declaration', async () => {
    const user: RowOf<typeof User> = await orm.insert(User, { email: 'a@x' });
    const id: bigint = user.id;
    const name: string | null = user.name;
    expect([typeof id, name]).toEqual(['bigint', null]);
  });
});

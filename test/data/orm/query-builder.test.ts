/**
 * The query builder on both backends with identical assertions: every filter, order, limit/offset,
 * select, joins, count/exists, aggregates with groupBy, the all() cap, and LIKE being case-sensitive
 * with the same wildcard rules on both.
 */
import { describe, expect, it } from 'vitest';
import { InvalidQuery, OrmTooManyRows, TooManyRows } from '../../../src/data/index.js';
import { and, avg, count, defineModel, eq, field, gt, gte, inList, isNull, isNotNull, like, lt, lte, max, min, ne, not, notInList, or, Orm, sql, sum, where } from '../../../src/data/orm/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { ormFixture, Post, seedUsersAndPosts, User, type OrmFixture } from './core-support.js';

describe.each(BACKENDS)('ORM queries on $name', (backend) => {
  let fx: OrmFixture;
  let orm: Orm;
  openForEachTest(backend, async (opened) => {
    fx = await ormFixture(opened);
    orm = fx.orm;
    await seedUsersAndPosts(orm);
  });

  const emails = async (q: ReturnType<Orm['query']>): Promise<string[]> => (await q.orderBy('email').all()).map((u) => (u as { email: string }).email);

  it('filters: eq, ne, lt, lte, gt, gte, in, not in, isNull, and/or/not, object equality', async () => {
    expect(await emails(orm.query(User).where(eq(User.c.name, 'Ada')))).toEqual(['ada@x']);
    expect(await emails(orm.query(User).where(ne(User.c.email, 'ada@x')))).toEqual(['bob@x', 'cy@x', 'dee@x']);
    expect(await emails(orm.query(User).where(lt(User.c.id, 2n)))).toEqual(['ada@x']);
    expect(await emails(orm.query(User).where(lte(User.c.id, 2n)))).toEqual(['ada@x', 'bob@x']);
    expect(await emails(orm.query(User).where(gt(User.c.id, 3n)))).toEqual(['dee@x']);
    expect(await emails(orm.query(User).where(gte(User.c.id, 3n)))).toEqual(['cy@x', 'dee@x']);
    expect(await emails(orm.query(User).where(inList(User.c.id, [1n, 3n, 99n])))).toEqual(['ada@x', 'cy@x']);
    expect(await emails(orm.query(User).where(inList(User.c.id, [])))).toEqual([]);
    expect(await emails(orm.query(User).where(notInList(User.c.id, [1n, 3n])))).toEqual(['bob@x', 'dee@x']);
    expect(await emails(orm.query(User).where(isNull(User.c.name)))).toEqual(['cy@x']);
    expect(await emails(orm.query(User).where(eq(User.c.name, null)))).toEqual(['cy@x']);
    expect(await emails(orm.query(User).where(isNotNull(User.c.name)))).toEqual(['ada@x', 'bob@x', 'dee@x']);
    expect(await emails(orm.query(User).where(or(eq(User.c.email, 'ada@x'), and(eq(User.c.active, false), isNull(User.c.name)))))).toEqual(['ada@x', 'cy@x']);
    expect(await emails(orm.query(User).where(not(eq(User.c.active, true))))).toEqual(['cy@x']);
    expect(await emails(orm.query(User).where({ active: true, name: 'bob' }))).toEqual(['bob@x']);
    expect(await emails(orm.query(User).where(where(sql`${sql.ident('email')} LIKE ${'d%'}`)))).toEqual(['dee@x']);
  });

  it('like is case-sensitive, with % _ and backslash escapes, on both backends', async () => {
    expect(await emails(orm.query(User).where(like(User.c.name, 'A%')))).toEqual(['ada@x']);
    expect(await emails(orm.query(User).where(like(User.c.name, 'a%')))).toEqual([]);
    expect(await emails(orm.query(User).where(like(User.c.name, '_ob')))).toEqual(['bob@x']);
    expect(await emails(orm.query(User).where(like(User.c.name, 'Dee\\_\\%')))).toEqual(['dee@x']);
    expect(await emails(orm.query(User).where(like(User.c.name, 'Dee\\_x')))).toEqual([]);
    expect(await emails(orm.query(User).where(like(User.c.email, '%[x]%')))).toEqual([]);
  });

  it('orders, limits, offsets and selects columns', async () => {
    const rows = await orm.query(User).select('email', 'id').orderBy(User.c.id, 'desc').limit(2).offset(1).all();
    expect(rows).toEqual([
      { email: 'cy@x', id: 3n },
      { email: 'bob@x', id: 2n },
    ]);
    const nullsLastAsc = await orm.query(User).select('name').orderBy('name').all();
    expect(nullsLastAsc.map((r) => r.name)).toEqual(['Ada', 'Dee_%', 'bob', null]);
    const nullsFirstDesc = await orm.query(User).select('name').orderBy('name', 'desc').all();
    expect(nullsFirstDesc.map((r) => r.name)).toEqual([null, 'bob', 'Dee_%', 'Ada']);
    expect((await orm.query(User).orderBy('id').offset(3).all()).map((u) => u.id)).toEqual([4n]);
    expect(await orm.query(User).orderBy('id').first()).toMatchObject({ email: 'ada@x' });
    expect(await orm.query(User).where({ email: 'zz' }).first()).toBeUndefined();
  });

  it('counts, tests existence', async () => {
    expect(await orm.query(User).count()).toBe(4);
    expect(await orm.query(Post).where(eq(Post.c.authorId, 4n)).count()).toBe(4);
    expect(await orm.query(User).where({ email: 'bob@x' }).exists()).toBe(true);
    expect(await orm.query(User).where({ email: 'nope' }).exists()).toBe(false);
  });

  it('joins: filter on the joined table, select columns of both', async () => {
    const rows = await orm
      .query(Post)
      .join(User, eq(Post.c.authorId, User.c.id))
      .where(eq(User.c.active, true))
      .where(gte(Post.c.score, 31))
      .select({ title: Post.c.title, author: User.c.email, createdAt: User.c.createdAt })
      .orderBy(Post.c.id)
      .all();
    expect(rows.map((r) => [r.title, r.author])).toEqual([
      ['dee@x#0', 'dee@x'],
      ['dee@x#1', 'dee@x'],
      ['dee@x#2', 'dee@x'],
      ['dee@x#3', 'dee@x'],
    ]);
    expect(rows[0]!.createdAt).toBeInstanceOf(Date);
    const left = await orm.query(User).leftJoin(Post, eq(Post.c.authorId, User.c.id)).where(eq(User.c.email, 'cy@x')).select({ email: User.c.email, title: Post.c.title }).orderBy(Post.c.id).all();
    expect(left.map((r) => r.title)).toEqual(['cy@x#0', 'cy@x#1', 'cy@x#2']);
    expect(() => orm.query(User).join(User, eq(User.c.id, User.c.id))).toThrow(InvalidQuery);
    await expect(orm.query(User).where(eq(Post.c.id, 1n)).all()).rejects.toBeInstanceOf(InvalidQuery);
  });

  it('aggregates with groupBy read the same types on both backends', async () => {
    const rows = await orm
      .query(Post)
      .select({ authorId: Post.c.authorId, n: count(), total: sum(Post.c.score), mean: avg(Post.c.score), lo: min(Post.c.score), hi: max(Post.c.id) })
      .groupBy(Post.c.authorId)
      .orderBy(Post.c.authorId)
      .all();
    expect(rows).toEqual([
      { authorId: 1n, n: 1, total: 10, mean: 10, lo: 10, hi: 1n },
      { authorId: 2n, n: 2, total: 41, mean: 20.5, lo: 20, hi: 3n },
      { authorId: 3n, n: 3, total: 93, mean: 31, lo: 30, hi: 6n },
      { authorId: 4n, n: 4, total: 166, mean: 41.5, lo: 40, hi: 10n },
    ]);
    const [totals] = await orm.query(Post).select({ ids: sum(Post.c.id), n: count(Post.c.id) }).all();
    expect(totals).toEqual({ ids: 55n, n: 10 });
    expect(await orm.query(Post).groupBy(Post.c.authorId).count()).toBe(4);
    const [empty] = await orm.query(Post).where(eq(Post.c.authorId, 99n)).select({ s: sum(Post.c.score), m: max(Post.c.title) }).all();
    expect(empty).toEqual({ s: null, m: null });
  });

  it('all() refuses more than its cap with a typed error naming pagination', async () => {
    const small = new Orm(fx.counting, { maxRows: 5 });
    await expect(small.query(Post).all()).rejects.toBeInstanceOf(OrmTooManyRows);
    await expect(small.query(Post).all()).rejects.toThrow(/paginate/);
    expect(await small.query(Post).limit(5).all()).toHaveLength(5);
    expect(await small.query(User).all()).toHaveLength(4);
  });

  it('a bulk update whose returned rows pass the cap is rolled back, not half-reported', async () => {
    const small = new Orm(fx.counting, { maxRows: 2 });
    await expect(small.query(User).update({ name: 'all' }, { returning: true })).rejects.toBeInstanceOf(TooManyRows);
    expect(await orm.query(User).where({ name: 'all' }).count()).toBe(0);
    expect(await small.query(User).update({ name: 'all' })).toBe(4);
  });

  it('streams rows through a cursor, decoded', async () => {
    const seen: bigint[] = [];
    for await (const post of orm.query(Post).orderBy('id').stream({ batchSize: 3 })) seen.push(post.id);
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
  });

  it('binds every value: the SQL text has only placeholders', async () => {
    const { text, params } = orm.query(User).where(eq(User.c.email, "x' OR '1'='1")).limit(3).toSql();
    expect(text).not.toContain("'1'='1");
    expect(text).toMatch(/"email" = \$1/);
    expect(params).toEqual(["x' OR '1'='1", 3]);
    expect(await orm.query(User).where(eq(User.c.email, "x' OR '1'='1")).all()).toEqual([]);
  });

  it('inList binds one parameter for any number of values (beyond the 1,024 cap), on both backends', async () => {
    const ids = Array.from({ length: 3000 }, (_, i) => BigInt(i + 1));
    const { params } = orm.query(User).where(inList(User.c.id, ids)).toSql();
    expect(params).toHaveLength(1);
    expect(await emails(orm.query(User).where(inList(User.c.id, ids)))).toEqual(['ada@x', 'bob@x', 'cy@x', 'dee@x']);
    expect(await emails(orm.query(User).where(inList(User.c.email, ["x' OR 1=1 --", 'cy@x'])))).toEqual(['cy@x']);
    expect(await emails(orm.query(User).where(notInList(User.c.createdAt, [new Date(0)])))).toHaveLength(4);
  });

  it('validates limits and models', () => {
    expect(() => orm.query(User).limit(-1)).toThrow(InvalidQuery);
    expect(() => orm.query(User).limit(1.5)).toThrow(InvalidQuery);
    expect(() => defineModel('x', { a: field.int32() })).toThrow(/primary key/);
    expect(() => defineModel('x'.repeat(64), { a: field.int32().primaryKey() })).toThrow(/63 bytes/);
    expect(() => defineModel('x', { a: field.text().primaryKey().autoIncrement() })).toThrow(/autoIncrement/);
    expect(() => defineModel('x', { a: field.int32().primaryKey() }, { indexes: [{ columns: ['b'] }] })).toThrow(/not a field/);
  });
});

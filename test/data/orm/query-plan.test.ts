/**
 * Per-shape statement plans (src/data/orm/plan.ts): for random query shapes with random values, a
 * query served from a cached plan has the SQL text and parameters of a fresh build and reads the
 * same rows, on both backends; a cached shape lets no forged node through; the cache is capped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidQuery } from '../../../src/data/index.js';
import { and, eq, gt, gte, inList, isNotNull, isNull, like, lt, lte, ne, not, notInList, or, type Condition, type Orm } from '../../../src/data/orm/index.js';
import type { ColumnRef } from '../../../src/data/orm/model.js';
import { clearPlans, PLAN_CACHE_MAX, planCount } from '../../../src/data/orm/plan.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { ormFixture, Post, seedUsersAndPosts, User } from './core-support.js';

/** Columns a shape may use, by name; values for each come from `value` and a seed. */
const COLUMNS: Record<string, ColumnRef<any>> = {
  'u.id': User.c.id,
  'u.email': User.c.email,
  'u.name': User.c.name,
  'u.active': User.c.active,
  'p.id': Post.c.id,
  'p.title': Post.c.title,
  'p.score': Post.c.score,
};
const USER_COLUMNS = ['u.id', 'u.email', 'u.name', 'u.active'];
const TEXT_COLUMNS = ['u.email', 'u.name', 'p.title'];

function value(column: string, seed: number): unknown {
  switch (column) {
    case 'u.id':
    case 'p.id':
      return BigInt(seed % 12);
    case 'u.email':
      return `${['ada', 'bob', 'cy', 'dee'][seed % 4]}@x`;
    case 'u.name':
    case 'p.title':
      return ['Ada', 'bob', "it's", 'Dee_%', 'ada@x#0'][seed % 5];
    case 'u.active':
      return seed % 2 === 0;
    default:
      return seed % 40;
  }
}

type Shape =
  | { readonly t: 'cmp'; readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly col: string }
  | { readonly t: 'in'; readonly col: string; readonly n: number; readonly negate: boolean }
  | { readonly t: 'like'; readonly col: string }
  | { readonly t: 'null'; readonly col: string; readonly negate: boolean }
  | { readonly t: 'and' | 'or'; readonly items: readonly Shape[] }
  | { readonly t: 'not'; readonly item: Shape };

const shapeArb = (columns: readonly string[]): fc.Arbitrary<Shape> =>
  fc.letrec<{ node: Shape }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ t: fc.constant('cmp' as const), op: fc.constantFrom('eq' as const, 'ne' as const, 'lt' as const, 'lte' as const, 'gt' as const, 'gte' as const), col: fc.constantFrom(...columns.filter((c) => c !== 'u.active')) }),
      fc.record({ t: fc.constant('in' as const), col: fc.constantFrom(...columns), n: fc.integer({ min: 0, max: 4 }), negate: fc.boolean() }),
      fc.record({ t: fc.constant('like' as const), col: fc.constantFrom(...columns.filter((c) => TEXT_COLUMNS.includes(c))) }),
      fc.record({ t: fc.constant('null' as const), col: fc.constantFrom(...columns), negate: fc.boolean() }),
      fc.record({ t: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('node'), { maxLength: 3 }) }),
      fc.record({ t: fc.constant('not' as const), item: tie('node') }),
    ),
  })).node;

const OPS = { eq, ne, lt, lte, gt, gte };

/** The condition of a shape with values drawn from `seed` (each leaf its own). */
function condition(shape: Shape, seed: number, at = { i: 0 }): Condition {
  const next = (): number => seed + 7 * at.i++;
  switch (shape.t) {
    case 'cmp':
      return OPS[shape.op](COLUMNS[shape.col]!, value(shape.col, next()) as never);
    case 'in': {
      const values = Array.from({ length: shape.n }, () => value(shape.col, next()));
      return (shape.negate ? notInList : inList)(COLUMNS[shape.col]!, values as never[]);
    }
    case 'like':
      return like(COLUMNS[shape.col]!, `${String(value(shape.col, next())).slice(0, 2)}%`);
    case 'null':
      return (shape.negate ? isNotNull : isNull)(COLUMNS[shape.col]!);
    case 'and':
    case 'or':
      return (shape.t === 'and' ? and : or)(...shape.items.map((item) => condition(item, seed, at)));
    case 'not':
      return not(condition(shape.item, seed, at));
  }
}

const OP_NAMES = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'] as const;

/** The shape with one node changed in each way a shape can differ from its neighbours. */
function nodeVariants(shape: Shape): Shape[] {
  switch (shape.t) {
    case 'cmp':
      return OP_NAMES.filter((op) => op !== shape.op).map((op) => ({ ...shape, op }));
    case 'in':
      return [{ ...shape, negate: !shape.negate }, { ...shape, n: shape.n === 0 ? 2 : 0 }, { ...shape, n: shape.n + 1 }];
    case 'like':
      return [{ t: 'null', col: shape.col, negate: false }];
    case 'null':
      return [{ ...shape, negate: !shape.negate }];
    case 'and':
    case 'or':
      return [
        { ...shape, t: shape.t === 'and' ? 'or' : 'and' },
        ...shape.items.flatMap((item, i) => nodeVariants(item).map((v) => ({ ...shape, items: shape.items.map((x, j) => (j === i ? v : x)) }))),
      ];
    case 'not':
      return [shape.item, ...nodeVariants(shape.item).map((item) => ({ ...shape, item }))];
  }
}

function variants(shape: QueryShape): QueryShape[] {
  return [
    { ...shape, limit: !shape.limit },
    { ...shape, offset: !shape.offset },
    { ...shape, select: shape.select === 'all' ? 'custom' : 'all' },
    { ...shape, order: shape.order.map(([c, d]) => [c, d === 'asc' ? 'desc' : 'asc'] as const) },
    ...shape.where.flatMap((item, i) => nodeVariants(item).map((v) => ({ ...shape, where: shape.where.map((x, j) => (j === i ? v : x)) }))),
  ];
}

interface QueryShape {
  readonly join: boolean;
  readonly where: readonly Shape[];
  readonly select: 'all' | 'columns' | 'custom';
  readonly order: readonly (readonly [string, 'asc' | 'desc'])[];
  readonly limit: boolean;
  readonly offset: boolean;
}

const queryShape: fc.Arbitrary<QueryShape> = fc.boolean().chain((join) => {
  const columns = join ? Object.keys(COLUMNS) : USER_COLUMNS;
  return fc.record({
    join: fc.constant(join),
    where: fc.array(shapeArb(columns), { maxLength: 3 }),
    select: fc.constantFrom('all' as const, 'columns' as const, 'custom' as const),
    order: fc.array(fc.tuple(fc.constantFrom(...columns), fc.constantFrom('asc' as const, 'desc' as const)), { maxLength: 2 }),
    limit: fc.boolean(),
    offset: fc.boolean(),
  });
});

/** The query of a shape with values from `seed`; ordered last by the row's own key, so its rows are one list. */
function build(orm: Orm, shape: QueryShape, seed: number) {
  if (shape.join) {
    let q = orm.query(Post).join(User, eq(Post.c.authorId, User.c.id));
    for (const item of shape.where) q = q.where(condition(item, seed));
    if (shape.select === 'columns') q = q.select('id', 'title', 'score') as never;
    else if (shape.select === 'custom') q = q.select({ id: Post.c.id, title: Post.c.title, who: User.c.email, on: User.c.active, made: User.c.createdAt }) as never;
    for (const [col, dir] of shape.order) q = q.orderBy(COLUMNS[col]!, dir);
    q = q.orderBy(Post.c.id);
    if (shape.limit) q = q.limit(1 + (seed % 5));
    if (shape.offset) q = q.offset(1 + (seed % 3));
    return q;
  }
  let q = orm.query(User);
  for (const item of shape.where) q = q.where(condition(item, seed));
  if (shape.select === 'columns') q = q.select('id', 'email', 'active') as never;
  else if (shape.select === 'custom') q = q.select({ key: User.c.id, mail: User.c.email, at: User.c.createdAt }) as never;
  for (const [col, dir] of shape.order) q = q.orderBy(COLUMNS[col]!, dir);
  q = q.orderBy(User.c.id);
  if (shape.limit) q = q.limit(1 + (seed % 5));
  if (shape.offset) q = q.offset(1 + (seed % 3));
  return q;
}

describe.each(BACKENDS)('ORM statement plans on $name', (backend) => {
  let orm: Orm;
  openForEachTest(backend, async (opened) => {
    orm = (await ormFixture(opened)).orm;
    await seedUsersAndPosts(orm);
  });

  it('a cached plan gives the text, parameters and rows of a fresh build, for random shapes and values', async () => {
    await fc.assert(
      // Shapes and their near neighbours share the cache: two shapes that differ anywhere must not share a plan.
      fc.asyncProperty(fc.array(queryShape, { minLength: 1, maxLength: 4 }), fc.nat(1_000), fc.nat(1_000), async (drawn, seedA, seedB) => {
        const shapes = drawn.flatMap((shape) => [shape, ...variants(shape).slice(0, 24)]);
        clearPlans();
        for (const shape of shapes) build(orm, shape, seedA).toSql();
        const plans = planCount();
        const cached = shapes.map((shape) => build(orm, shape, seedB).toSql());
        // Each query found the plan its shape made with other values.
        expect(planCount()).toBe(plans);
        const cachedRows = await build(orm, shapes[0]!, seedB).all();
        clearPlans();
        const fresh = shapes.map((shape) => {
          clearPlans();
          return build(orm, shape, seedB).toSql();
        });
        expect(cached).toEqual(fresh);
        clearPlans();
        expect(cachedRows).toEqual(await build(orm, shapes[0]!, seedB).all());
      }),
      { seed: 1_617, numRuns: 80 },
    );
  });

  it('a cached shape still refuses forged nodes and bad values on every call', async () => {
    clearPlans();
    const ok = orm.query(User).where(and(eq(User.c.email, 'ada@x'), gt(User.c.id, 0n)));
    expect((await ok.all()).map((u) => u.email)).toEqual(['ada@x']);
    // The same shape with a node from JSON (no brand) or a branded node with a forged operator.
    const json = JSON.parse(JSON.stringify(gt(User.c.email, "a"))) as Condition;
    const forgedOp = { ...gt(User.c.id, 0n), op: '> 0 OR 1 =' } as unknown as Condition;
    const forgedCol = { ...gt(User.c.id, 0n), col: { table: 'users', name: 'id', kind: 'int64', nullable: false } } as unknown as Condition;
    for (const bad of [json, forgedOp, forgedCol]) {
      expect(() => orm.query(User).where(and(eq(User.c.email, 'ada@x'), bad)).toSql()).toThrow(InvalidQuery);
    }
    // A value its column refuses is refused with the plan cached too.
    expect(() => orm.query(User).where(and(eq(User.c.email, 'ada@x'), gt(User.c.id, 'x' as never))).toSql()).toThrow();
    // A values-only change binds the new values and reads other rows through the same text.
    const other = orm.query(User).where(and(eq(User.c.email, 'bob@x'), gt(User.c.id, 0n)));
    expect(other.toSql().text).toBe(ok.toSql().text);
    expect(other.toSql().params).toEqual([...ok.toSql().params].with(0, 'bob@x'));
    expect(other.toSql().params).not.toEqual(ok.toSql().params);
    expect((await other.all()).map((u) => u.email)).toEqual(['bob@x']);
  });

  it('holds at most PLAN_CACHE_MAX shapes', () => {
    clearPlans();
    for (let i = 0; i < PLAN_CACHE_MAX + 50; i++) orm.query(User).select({ [`a${i}`]: User.c.id }).toSql();
    expect(planCount()).toBe(PLAN_CACHE_MAX);
    // The newest shape is kept, served from its plan.
    expect(orm.query(User).select({ [`a${PLAN_CACHE_MAX + 49}`]: User.c.id }).toSql().text).toContain(`"a${PLAN_CACHE_MAX + 49}"`);
    expect(planCount()).toBe(PLAN_CACHE_MAX);
  });
});

/**
 * The ORM's own cost per call, without a database: `npx tsx bench/orm/overhead.ts`.
 *
 * The orm suite measures ORM against raw client through a real server, where a few µs of ORM work
 * hide in the noise of a loaded machine (rounds spread 20-150 % there). This measures only what the
 * ORM adds: the same calls as the suite's find, insert and joined page, on a `Database` whose
 * `query` answers at once with a fixed result of the right shape, minus that bare `query` call.
 * CPU time, best of 5 rounds. Compare it with the raw client's CPU per statement in the orm suite's
 * `cpu µs/op` column (tens of µs a statement) to get the overhead share.
 */
import type { Database } from '../../src/data/database.js';
import { and, eq, gt, Orm } from '../../src/data/orm/index.js';
import type { Backend, Row } from '../../src/data/values.js';
import { Author, InsPost, Post } from './schema.js';

const ROUNDS = 5;

/** A database that answers every statement at once with rows made by `rows` (fresh: the ORM decodes in place). */
function instantDatabase(backend: Backend): { db: Database; answer: (make: (i: number) => Row[]) => void } {
  let make: (i: number) => Row[] = () => [];
  let n = 0;
  const db = { backend, query: () => Promise.resolve({ rows: make(n++), rowCount: 1 }) } as unknown as Database;
  return { db, answer: (next) => void (make = next) };
}

async function cpuPerCall(iterations: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < iterations / 5; i++) await fn(i);
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) await fn(i);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / iterations);
  }
  return best;
}

async function measure(backend: Backend): Promise<string> {
  const { db, answer } = instantDatabase(backend);
  const orm = new Orm(db);
  const int64 = (i: number): bigint | number => (backend === 'postgres' ? BigInt(i) : i);
  answer((i) => [{ id: int64(i), author_id: int64(7), title: 'post', score: 5 }]);
  const bare = await cpuPerCall(300_000, () => db.query(''));
  const find = await cpuPerCall(300_000, (i) => orm.find(Post, BigInt(i + 1)));
  const insert = await cpuPerCall(300_000, (i) => orm.insert(InsPost, { author_id: BigInt((i % 100) + 1), title: 'post', score: i % 100 }));
  answer((i) => Array.from({ length: 100 }, (_, k) => ({ id: int64(i + k), title: 't', score: k, author: 'a' })));
  const barePage = await cpuPerCall(30_000, () => db.query(''));
  const page = await cpuPerCall(30_000, (i) =>
    orm
      .query(Post)
      .join(Author, eq(Post.c.author_id, Author.c.id))
      .where(and(eq(Author.c.active, true), gt(Post.c.id, BigInt(i))))
      .select({ id: Post.c.id, title: Post.c.title, score: Post.c.score, author: Author.c.name })
      .orderBy(Post.c.id)
      .limit(100)
      .all(),
  );
  const us = (value: number): string => `${value.toFixed(2)} µs`;
  return `${backend.padEnd(8)} find ${us(find - bare)}, insert ${us(insert - bare)}, page of 100 joined rows ${us(page - barePage)}`;
}

console.log(`ORM-side CPU per call (best of ${ROUNDS} rounds, over a query that answers at once), node ${process.version}:`);
for (const backend of ['postgres', 'sqlite'] as const) console.log(await measure(backend));

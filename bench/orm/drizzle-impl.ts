/**
 * drizzle-orm on the same tables and queries: over postgres.js for Postgres (the same pool size as
 * Molo's) and over better-sqlite3 called synchronously on the main thread for SQLite. Code written
 * as an application would: the query builder per call, relational queries (`with`) for eager loads.
 */
import BetterSqlite3 from 'better-sqlite3';
import { and, asc, eq, gt, lte, sql as dsql } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { LITE_SCHEMA, liteAuthors, liteInsPosts, litePosts, PG_SCHEMA, pgAuthors, pgInsPosts, pgPosts } from './schema.js';
import { insertRow, insertRows, PAGE_SIZE, type OrmWork } from './work.js';

/**
 * The cases drizzle runs with `.prepare()` (statement built once, values bound per call): the
 * single-row statements a request handler repeats. Inserts in a transaction, bulk inserts (a
 * multi-row VALUES has no fixed shape), pages and eager loads use the default API only.
 */
export const DRIZZLE_PREPARED_CASES: readonly string[] = ['select_pk', 'insert_awaited', 'select_pk_awaited'];

export interface PgTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

export function drizzlePgWork(target: PgTarget, poolSize: number, authors: number, prepared = false): OrmWork {
  const client = postgres({ host: target.host, port: target.port, user: target.user, database: target.database, max: poolSize, onnotice: () => undefined });
  const db = drizzlePg(client, { schema: PG_SCHEMA });
  const insertOne = db
    .insert(pgInsPosts)
    .values({ author_id: dsql.placeholder('author_id'), title: dsql.placeholder('title'), score: dsql.placeholder('score') })
    .returning()
    .prepare('bench_insert');
  const findOne = db.select().from(pgPosts).where(eq(pgPosts.id, dsql.placeholder('id'))).prepare('bench_find');
  const insertValues = (i: number) => {
    const row = insertRow(i, authors);
    return { author_id: BigInt(row.author_id), title: row.title, score: row.score };
  };
  const insertAt = (i: number): Promise<unknown> => (prepared ? insertOne.execute(insertValues(i)) : db.insert(pgInsPosts).values(insertValues(i)).returning());
  const findAt = (id: number): Promise<{ id: bigint }[]> => (prepared ? findOne.execute({ id: BigInt(id) }) : db.select().from(pgPosts).where(eq(pgPosts.id, BigInt(id))));
  return {
    insertAwaited: async (n) => {
      let count = 0;
      for (let i = 0; i < n; i++) count += ((await insertAt(i)) as unknown[]).length;
      return count;
    },
    selectByKeyAwaited: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += Number((await findAt(idAt(i)))[0]!.id);
      return sum;
    },
    // One multi-row INSERT … VALUES: drizzle's bulk path (a prepared statement has a fixed row count, so it is the same here).
    bulkInsert: async (n) =>
      (await db.insert(pgInsPosts).values(insertRows(n, authors).map((row) => ({ author_id: BigInt(row.author_id), title: row.title, score: row.score }))).returning()).length,
    resetInsert: async () => void (await db.execute(dsql`DELETE FROM ins_posts`)),
    insert: (n) =>
      db.transaction(async (tx) => {
        const pending = new Array<Promise<unknown>>(n);
        for (let i = 0; i < n; i++) {
          const row = insertRow(i, authors);
          pending[i] = tx.insert(pgInsPosts).values({ author_id: BigInt(row.author_id), title: row.title, score: row.score }).returning();
        }
        return (await Promise.all(pending)).length;
      }),
    selectByKey: async (n, idAt) => {
      const pending = new Array<Promise<{ id: bigint }[]>>(n);
      for (let i = 0; i < n; i++) pending[i] = findAt(idAt(i));
      let sum = 0;
      for (const rows of await Promise.all(pending)) sum += Number(rows[0]!.id);
      return sum;
    },
    pages: async (n) => {
      let cursor = 0n;
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const page = await db
          .select({ id: pgPosts.id, title: pgPosts.title, score: pgPosts.score, author: pgAuthors.name })
          .from(pgPosts)
          .innerJoin(pgAuthors, eq(pgPosts.author_id, pgAuthors.id))
          .where(and(eq(pgAuthors.active, true), gt(pgPosts.id, cursor)))
          .orderBy(asc(pgPosts.id))
          .limit(PAGE_SIZE);
        rows += page.length;
        cursor = page.length < PAGE_SIZE ? 0n : page[page.length - 1]!.id;
      }
      return rows;
    },
    eager: async (n, parents) => {
      let comments = 0;
      for (let i = 0; i < n; i++) {
        const loaded = await db.query.pgAuthors.findMany({
          where: lte(pgAuthors.id, BigInt(parents)),
          orderBy: asc(pgAuthors.id),
          with: { posts: { with: { comments: true } } },
        });
        for (const author of loaded) for (const post of author.posts) comments += post.comments.length;
      }
      return comments;
    },
    close: () => client.end({ timeout: 5 }),
  };
}

export function drizzleSqliteWork(file: string, authors: number, prepared = false): OrmWork {
  const client = new BetterSqlite3(file);
  client.pragma('journal_mode = WAL');
  client.pragma('synchronous = NORMAL');
  client.pragma('busy_timeout = 5000');
  const db = drizzleSqlite(client, { schema: LITE_SCHEMA });
  const insertOne = db
    .insert(liteInsPosts)
    .values({ author_id: dsql.placeholder('author_id'), title: dsql.placeholder('title'), score: dsql.placeholder('score') })
    .returning()
    .prepare();
  const findOne = db.select().from(litePosts).where(eq(litePosts.id, dsql.placeholder('id'))).prepare();
  const insertAt = (target: typeof db, i: number): unknown =>
    prepared ? insertOne.get(insertRow(i, authors)) : target.insert(liteInsPosts).values(insertRow(i, authors)).returning().get();
  const findAt = (id: number): { id: number } => (prepared ? findOne.get({ id }) : db.select().from(litePosts).where(eq(litePosts.id, id)).get())!;
  return {
    insertAwaited: async (n) => {
      let count = 0;
      // Awaited as a handler would; better-sqlite3 answers synchronously on this thread.
      for (let i = 0; i < n; i++) if ((await insertAt(db, i)) !== undefined) count++;
      return count;
    },
    selectByKeyAwaited: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (await findAt(idAt(i))).id;
      return sum;
    },
    bulkInsert: async (n) => {
      // SQLite binds at most 32,766 variables a statement: 3 per row, so chunks of 10,000 rows, in one transaction.
      const rows = insertRows(n, authors);
      return db.transaction((tx) => {
        let count = 0;
        for (let at = 0; at < rows.length; at += 10_000) count += tx.insert(liteInsPosts).values(rows.slice(at, at + 10_000)).returning().all().length;
        return count;
      });
    },
    resetInsert: async () => {
      db.run(dsql`DELETE FROM ins_posts`);
      // As Molo's resets do: every write round starts from an empty WAL (see molo-impl.ts).
      client.pragma('wal_checkpoint(TRUNCATE)');
    },
    insert: async (n) =>
      db.transaction((tx) => {
        let count = 0;
        for (let i = 0; i < n; i++) {
          insertAt(tx as unknown as typeof db, i);
          count++;
        }
        return count;
      }),
    selectByKey: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += findAt(idAt(i)).id;
      return sum;
    },
    pages: async (n) => {
      let cursor = 0;
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const page = db
          .select({ id: litePosts.id, title: litePosts.title, score: litePosts.score, author: liteAuthors.name })
          .from(litePosts)
          .innerJoin(liteAuthors, eq(litePosts.author_id, liteAuthors.id))
          .where(and(eq(liteAuthors.active, true), gt(litePosts.id, cursor)))
          .orderBy(asc(litePosts.id))
          .limit(PAGE_SIZE)
          .all();
        rows += page.length;
        cursor = page.length < PAGE_SIZE ? 0 : page[page.length - 1]!.id;
      }
      return rows;
    },
    eager: async (n, parents) => {
      let comments = 0;
      for (let i = 0; i < n; i++) {
        const loaded = db.query.liteAuthors
          .findMany({ where: lte(liteAuthors.id, parents), orderBy: asc(liteAuthors.id), with: { posts: { with: { comments: true } } } })
          .sync();
        for (const author of loaded) for (const post of author.posts) comments += post.comments.length;
      }
      return comments;
    },
    close: async () => void client.close(),
  };
}

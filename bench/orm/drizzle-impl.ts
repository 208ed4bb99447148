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
import { insertRow, PAGE_SIZE, type OrmWork } from './work.js';

export interface PgTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

export function drizzlePgWork(target: PgTarget, poolSize: number, authors: number): OrmWork {
  const client = postgres({ host: target.host, port: target.port, user: target.user, database: target.database, max: poolSize, onnotice: () => undefined });
  const db = drizzlePg(client, { schema: PG_SCHEMA });
  return {
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
      for (let i = 0; i < n; i++) pending[i] = db.select().from(pgPosts).where(eq(pgPosts.id, BigInt(idAt(i))));
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

export function drizzleSqliteWork(file: string, authors: number): OrmWork {
  const client = new BetterSqlite3(file);
  client.pragma('journal_mode = WAL');
  client.pragma('synchronous = NORMAL');
  client.pragma('busy_timeout = 5000');
  const db = drizzleSqlite(client, { schema: LITE_SCHEMA });
  return {
    resetInsert: async () => void db.run(dsql`DELETE FROM ins_posts`),
    insert: async (n) =>
      db.transaction((tx) => {
        let count = 0;
        for (let i = 0; i < n; i++) {
          tx.insert(liteInsPosts).values(insertRow(i, authors)).returning().get();
          count++;
        }
        return count;
      }),
    selectByKey: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += db.select().from(litePosts).where(eq(litePosts.id, idAt(i))).get()!.id;
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

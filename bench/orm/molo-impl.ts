/**
 * Molo's two contenders: the ORM, and the raw client running the same statements the ORM sends
 * (so the difference between them is the ORM's own cost: building, encoding, decoding, events).
 * "The same" is checked against what the ORM hands the driver: the SQL text to the character, the
 * parameter values as the ORM encodes them (int64 columns as bigint), the same maxRows, and for the
 * bulk insert the same chunked multi-row INSERTs in one transaction.
 */
import { and, eq, gt, lte, Orm } from '../../src/data/orm/index.js';
import type { Database, Queryable } from '../../src/data/database.js';
import { SqliteDatabase } from '../../src/data/sqlite/index.js';
import type { Row, Value } from '../../src/data/values.js';
import { Author, authorPosts, InsPost, Post, postComments } from './schema.js';
import { insertRow, insertRows, PAGE_SIZE, type OrmWork } from './work.js';

/**
 * Empties the insert table; on SQLite also checkpoints the WAL away, so every write round starts
 * from the same WAL state whichever side ran before it (alternating rounds otherwise leave the
 * writer with a WAL grown by the other side's rows, and the checkpoint lands inside a timed round).
 */
async function resetInsert(db: Database): Promise<void> {
  await db.query('DELETE FROM "ins_posts"');
  if (db instanceof SqliteDatabase) await db.checkpoint('TRUNCATE');
}

export function moloOrmWork(db: Database, authors: number): OrmWork {
  const orm = new Orm(db);
  return {
    resetInsert: () => resetInsert(db),
    insert: (n) =>
      orm.transaction(async (tx) => {
        const pending = new Array<Promise<unknown>>(n);
        for (let i = 0; i < n; i++) pending[i] = tx.insert(InsPost, { ...insertRow(i, authors), author_id: BigInt((i % authors) + 1) });
        return (await Promise.all(pending)).length;
      }),
    selectByKey: async (n, idAt) => {
      const pending = new Array<Promise<{ id: bigint } | undefined>>(n);
      for (let i = 0; i < n; i++) pending[i] = orm.find(Post, BigInt(idAt(i)));
      let sum = 0;
      for (const row of await Promise.all(pending)) sum += Number(row!.id);
      return sum;
    },
    pages: async (n) => {
      let cursor = 0n;
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const page = await orm
          .query(Post)
          .join(Author, eq(Post.c.author_id, Author.c.id))
          .where(and(eq(Author.c.active, true), gt(Post.c.id, cursor)))
          .select({ id: Post.c.id, title: Post.c.title, score: Post.c.score, author: Author.c.name })
          .orderBy(Post.c.id)
          .limit(PAGE_SIZE)
          .all();
        rows += page.length;
        cursor = page.length < PAGE_SIZE ? 0n : page[page.length - 1]!.id;
      }
      return rows;
    },
    eager: async (n, parents) => {
      let comments = 0;
      for (let i = 0; i < n; i++) {
        const loaded = await orm.query(Author).where(lte(Author.c.id, BigInt(parents))).orderBy('id').preload('posts', 'posts.comments').all();
        for (const author of loaded) for (const post of authorPosts.of(author)) comments += postComments.of(post).length;
      }
      return comments;
    },
    insertAwaited: async (n) => {
      let count = 0;
      for (let i = 0; i < n; i++) if ((await orm.insert(InsPost, { ...insertRow(i, authors), author_id: BigInt((i % authors) + 1) })) !== undefined) count++;
      return count;
    },
    selectByKeyAwaited: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += Number((await orm.find(Post, BigInt(idAt(i))))!.id);
      return sum;
    },
    bulkInsert: async (n) => (await orm.insertMany(InsPost, insertRows(n, authors).map((row) => ({ ...row, author_id: BigInt(row.author_id) })))).length,
    close: () => db.close(),
  };
}

const INSERT = 'INSERT INTO "ins_posts" ("author_id", "title", "score") VALUES ($1, $2, $3) RETURNING "id", "author_id", "title", "score"';
const FIND = 'SELECT "id", "author_id", "title", "score" FROM "posts" WHERE "id" = $1';
const PAGE =
  'SELECT "posts"."id" AS "id", "posts"."title" AS "title", "posts"."score" AS "score", "authors"."name" AS "author" FROM "posts" INNER JOIN "authors" ON "posts"."author_id" = "authors"."id" WHERE ("authors"."active" = $1 AND "posts"."id" > $2) ORDER BY "posts"."id" ASC LIMIT $3';
/** all() asks for one row past its cap (10,000) to tell a full result from a cut one. */
const ALL_CAP = 10_001;
const AUTHORS = 'SELECT "id", "name", "active" FROM "authors" WHERE "id" <= $1 ORDER BY "id" ASC LIMIT $2';
const ONE_ROW = { maxRows: 1 };
const PAGE_ROWS = { maxRows: PAGE_SIZE };
/** Rows per bulk statement: the ORM's chunk under the 1,024-parameter cap, 3 columns a row. */
const BULK_CHUNK = Math.floor(1_024 / 3);

/** The ORM's multi-row INSERT of `rows` rows. */
function bulkInsertSql(rows: number): string {
  const groups: string[] = [];
  for (let r = 0; r < rows; r++) groups.push(`($${3 * r + 1}, $${3 * r + 2}, $${3 * r + 3})`);
  return `INSERT INTO "ins_posts" ("author_id", "title", "score") VALUES ${groups.join(', ')} RETURNING "id", "author_id", "title", "score"`;
}

/** `col IN keys` as the ORM writes it: one array parameter (`= ANY($1)`; SQLite: `json_each($1)` over a JSON array). */
function inList(db: Database, select: string, column: string, keys: readonly Value[]): { text: string; params: Value[] } {
  if (db.backend === 'postgres') return { text: `${select} WHERE ${column} = ANY($1) ORDER BY "id"`, params: [keys] };
  return { text: `${select} WHERE ${column} IN (SELECT value FROM json_each($1)) ORDER BY "id"`, params: [`[${keys.map((k) => String(k)).join(',')}]`] };
}

async function bulkInsert(q: Queryable, n: number, authors: number): Promise<number> {
  const rows = insertRows(n, authors);
  let count = 0;
  for (let start = 0; start < rows.length; start += BULK_CHUNK) {
    const chunk = rows.slice(start, start + BULK_CHUNK);
    const params: Value[] = [];
    for (const row of chunk) params.push(BigInt(row.author_id), row.title, row.score);
    count += (await q.query(bulkInsertSql(chunk.length), params, undefined, { maxRows: chunk.length })).rows.length;
  }
  return count;
}

function group(rows: readonly Row[], key: string): Map<unknown, Row[]> {
  const out = new Map<unknown, Row[]>();
  for (const row of rows) {
    const k = row[key];
    const list = out.get(k);
    if (list === undefined) out.set(k, [row]);
    else list.push(row);
  }
  return out;
}

export function moloRawWork(db: Database, authors: number): OrmWork {
  return {
    resetInsert: () => resetInsert(db),
    insert: (n) =>
      db.transaction(async (tx) => {
        const pending = new Array<Promise<unknown>>(n);
        for (let i = 0; i < n; i++) {
          const row = insertRow(i, authors);
          pending[i] = tx.query(INSERT, [BigInt(row.author_id), row.title, row.score]);
        }
        return (await Promise.all(pending)).length;
      }),
    selectByKey: async (n, idAt) => {
      const pending = new Array<Promise<{ rows: Row[] }>>(n);
      for (let i = 0; i < n; i++) pending[i] = db.query(FIND, [BigInt(idAt(i))], undefined, ONE_ROW);
      let sum = 0;
      for (const result of await Promise.all(pending)) sum += Number(result.rows[0]!.id);
      return sum;
    },
    pages: async (n) => {
      let cursor: Value = 0n;
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const page: Row[] = (await db.query(PAGE, [true, cursor, PAGE_SIZE], undefined, PAGE_ROWS)).rows;
        rows += page.length;
        // The ORM's cursor is the decoded int64: a bigint on both backends.
        cursor = page.length < PAGE_SIZE ? 0n : BigInt(page[page.length - 1]!.id as number | bigint);
      }
      return rows;
    },
    eager: async (n, parents) => {
      let comments = 0;
      for (let i = 0; i < n; i++) {
        const loaded = (await db.query(AUTHORS, [BigInt(parents), ALL_CAP], undefined, { maxRows: ALL_CAP })).rows;
        const posts = inList(db, 'SELECT "id", "author_id", "title", "score" FROM "posts"', '"author_id"', loaded.map((a) => a.id as Value));
        const postRows = (await db.query(posts.text, posts.params, undefined, { maxRows: 100_000 })).rows;
        const byAuthor = group(postRows, 'author_id');
        const cs = inList(db, 'SELECT "id", "post_id", "body" FROM "comments"', '"post_id"', postRows.map((p) => p.id as Value));
        const commentRows = (await db.query(cs.text, cs.params, undefined, { maxRows: 100_000 })).rows;
        const byPost = group(commentRows, 'post_id');
        for (const author of loaded) {
          const list = byAuthor.get(author.id) ?? [];
          author.posts = list;
          for (const post of list) {
            const c = byPost.get(post.id) ?? [];
            post.comments = c;
            comments += c.length;
          }
        }
      }
      return comments;
    },
    insertAwaited: async (n) => {
      let count = 0;
      for (let i = 0; i < n; i++) {
        const row = insertRow(i, authors);
        count += (await db.query(INSERT, [BigInt(row.author_id), row.title, row.score])).rows.length;
      }
      return count;
    },
    selectByKeyAwaited: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += Number((await db.query(FIND, [BigInt(idAt(i))], undefined, ONE_ROW)).rows[0]!.id);
      return sum;
    },
    // As insertMany does it: chunks of 341 rows, one multi-row INSERT each, in one transaction when there are several.
    bulkInsert: (n) => (n <= BULK_CHUNK ? bulkInsert(db, n, authors) : db.transaction((tx) => bulkInsert(tx, n, authors))),
    close: () => db.close(),
  };
}

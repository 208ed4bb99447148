/**
 * Molo's two contenders: the ORM, and the raw client running the same SQL text the ORM builds
 * (so the difference between them is the ORM's own cost: building, encoding, decoding, events).
 */
import { and, eq, gt, lte, Orm } from '../../src/data/orm/index.js';
import type { Database } from '../../src/data/database.js';
import type { Row, Value } from '../../src/data/values.js';
import { Author, authorPosts, InsPost, Post, postComments } from './schema.js';
import { insertRow, insertRows, PAGE_SIZE, type OrmWork } from './work.js';

export function moloOrmWork(db: Database, authors: number): OrmWork {
  const orm = new Orm(db);
  return {
    resetInsert: async () => void (await db.query('DELETE FROM "ins_posts"')),
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
  'SELECT "posts"."id" AS "id", "posts"."title" AS "title", "posts"."score" AS "score", "authors"."name" AS "author" FROM "posts" INNER JOIN "authors" ON "posts"."author_id" = "authors"."id" WHERE "authors"."active" = $1 AND "posts"."id" > $2 ORDER BY "posts"."id" ASC LIMIT $3';
const AUTHORS = 'SELECT "id", "name", "active" FROM "authors" WHERE "id" <= $1 ORDER BY "id" ASC';

/** `col IN keys` as the ORM writes it: one array parameter (`= ANY($1)`; SQLite: `json_each($1)` over a JSON array). */
function inList(db: Database, select: string, column: string, keys: readonly Value[]): { text: string; params: Value[] } {
  if (db.backend === 'postgres') return { text: `${select} WHERE ${column} = ANY($1) ORDER BY "id"`, params: [keys] };
  return { text: `${select} WHERE ${column} IN (SELECT value FROM json_each($1)) ORDER BY "id"`, params: [`[${keys.map((k) => String(k)).join(',')}]`] };
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
    resetInsert: async () => void (await db.query('DELETE FROM "ins_posts"')),
    insert: (n) =>
      db.transaction(async (tx) => {
        const pending = new Array<Promise<unknown>>(n);
        for (let i = 0; i < n; i++) {
          const row = insertRow(i, authors);
          pending[i] = tx.query(INSERT, [row.author_id, row.title, row.score]);
        }
        return (await Promise.all(pending)).length;
      }),
    selectByKey: async (n, idAt) => {
      const pending = new Array<Promise<{ rows: Row[] }>>(n);
      for (let i = 0; i < n; i++) pending[i] = db.query(FIND, [idAt(i)]);
      let sum = 0;
      for (const result of await Promise.all(pending)) sum += Number(result.rows[0]!.id);
      return sum;
    },
    pages: async (n) => {
      let cursor: Value = 0;
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const page: Row[] = (await db.query(PAGE, [true, cursor, PAGE_SIZE])).rows;
        rows += page.length;
        cursor = page.length < PAGE_SIZE ? 0 : (page[page.length - 1]!.id as Value);
      }
      return rows;
    },
    eager: async (n, parents) => {
      let comments = 0;
      for (let i = 0; i < n; i++) {
        const loaded = (await db.query(AUTHORS, [parents])).rows;
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
        count += (await db.query(INSERT, [row.author_id, row.title, row.score])).rows.length;
      }
      return count;
    },
    selectByKeyAwaited: async (n, idAt) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += Number((await db.query(FIND, [idAt(i)])).rows[0]!.id);
      return sum;
    },
    bulkInsert: async (n) => (await db.queryMany(INSERT, insertRows(n, authors).map((row) => [row.author_id, row.title, row.score]))).length,
    close: () => db.close(),
  };
}

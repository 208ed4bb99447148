/**
 * The ORM on SQLite in a temp directory: models declared once (row types inferred), inserts,
 * a filtered query, eager loading with one query per level, keyset pagination, an optimistic-lock
 * conflict, and the write events a cache would subscribe to.
 * Run: npm run example examples/orm.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { ConflictError, openSqlite } from 'molo/data';
import { defineModel, eq, field, gt, hasMany, NOW, Orm, type RowOf } from 'molo/data/orm';

const User = defineModel('users', {
  id: field.int64().primaryKey().autoIncrement(),
  email: field.string(120).unique(),
  createdAt: field.time().default(NOW),
});

const Post = defineModel(
  'posts',
  {
    id: field.int64().primaryKey().autoIncrement(),
    authorId: field.int64().index(),
    title: field.string(200),
    likes: field.int32().default(0),
    version: field.int64(),
  },
  { version: 'version' },
);

const userPosts = hasMany(User, 'posts', Post, { foreignKey: 'authorId' });

type UserRow = RowOf<typeof User>; // { id: bigint; email: string; createdAt: Date }

const dir = mkdtempSync(join(tmpdir(), 'molo-orm-example-'));
const system = new ActorSystem();
try {
  const db = await openSqlite(system, { file: join(dir, 'app.db') });
  const orm = new Orm(db);
  await orm.createTables(User, Post);

  const off = orm.events.subscribe((e) => console.log(`event: ${e.op} ${e.table} ${String(e.primaryKey)} (commit ${e.commitSeq}.${e.statementSeq})`));
  const [ada, bob]: UserRow[] = await orm.insertMany(User, [{ email: 'ada@example.com' }, { email: "bob'; DROP TABLE users; --@example.com" }]);
  await orm.transaction(async (tx) => {
    await tx.insertMany(Post, [
      { authorId: ada!.id, title: 'Actors', likes: 3 },
      { authorId: ada!.id, title: 'Supervisors' },
      { authorId: bob!.id, title: 'Injection, stored literally' },
    ]);
  });
  off();

  const popular = await orm.query(Post).where(gt(Post.c.likes, 0)).all();
  console.log(`popular: ${popular.map((p) => p.title).join(', ')}`);

  const users = await orm.query(User).orderBy('id').preload('posts').all();
  for (const user of users) console.log(`${user.email}: ${userPosts.of(user).length} post(s)`);

  const page = await orm.query(Post).orderBy('id').paginate({ limit: 2 });
  const rest = await orm.query(Post).orderBy('id').paginate({ after: page.next, limit: 2 });
  console.log(`pages: ${page.rows.length} + ${rest.rows.length}, last page: ${rest.next === null}`);

  const post = (await orm.query(Post).where(eq(Post.c.title, 'Actors')).first())!;
  await orm.update(Post, post, { likes: post.likes + 1 });
  try {
    await orm.update(Post, post, { likes: 100 }); // stale: based on version 1
  } catch (error) {
    if (error instanceof ConflictError) console.log(`conflict: expected version ${String(error.expectedVersion)}, now ${String(error.currentVersion)}`);
    else throw error;
  }
  await db.close();
} finally {
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}

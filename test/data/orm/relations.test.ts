/**
 * Relations on both backends: lazy loading, and eager preloading with the number of statements
 * asserted through a counting wrapper around the Database: one per relation per level, whatever
 * the number of parent rows (no N+1), nested levels included.
 */
import { describe, expect, it } from 'vitest';
import { InvalidModel, InvalidQuery } from '../../../src/data/index.js';
import { belongsTo, defineModel, eq, field, hasMany, Orm } from '../../../src/data/orm/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { Comment, ormFixture, Post, postAuthor, postComments, PostTag, postTags, Tag, User, userPosts, type OrmFixture } from './core-support.js';

describe.each(BACKENDS)('ORM relations on $name', (backend) => {
  let fx: OrmFixture;
  let orm: Orm;
  openForEachTest(backend, async (opened) => {
    fx = await ormFixture(opened);
    orm = fx.orm;
    // 5 users; user i has i posts; post p has (p mod 3) tags and 2 comments.
    const users = await orm.insertMany(User, Array.from({ length: 5 }, (_, i) => ({ email: `u${i}@x` })));
    const posts = await orm.insertMany(
      Post,
      users.flatMap((u, i) => Array.from({ length: i }, (_, j) => ({ authorId: u.id, title: `${u.email}/${j}` }))),
    );
    const tags = await orm.insertMany(Tag, [{ label: 'a' }, { label: 'b' }, { label: 'c' }]);
    await orm.insertMany(
      PostTag,
      posts.flatMap((p, i) => tags.slice(0, i % 3).map((t) => ({ postId: p.id, tagId: t.id }))),
    );
    await orm.insertMany(
      Comment,
      posts.flatMap((p) => [{ postId: p.id, text: `${p.title} c1` }, { postId: p.id, text: `${p.title} c2` }]),
    );
    fx.counting.reset();
  });

  it('lazy: belongsTo, hasMany and manyToMany of one row', async () => {
    const post = (await orm.query(Post).where({ title: 'u3@x/2' }).first())!;
    expect((await orm.load(postAuthor, post))?.email).toBe('u3@x');
    const user = (await orm.query(User).where({ email: 'u2@x' }).first())!;
    expect((await orm.load(userPosts, user)).map((p) => p.title)).toEqual(['u2@x/0', 'u2@x/1']);
    expect((await orm.load(postTags, post)).map((t) => t.label)).toEqual(['a', 'b']);
    expect(await orm.load(userPosts, (await orm.query(User).where({ email: 'u0@x' }).first())!)).toEqual([]);
    expect(post).not.toHaveProperty('author');
  });

  it('preload hasMany: one query for all parents', async () => {
    const users = await orm.query(User).orderBy('id').preload('posts').all();
    expect(fx.counting.count).toBe(2);
    expect(users.map((u) => userPosts.of(u).length)).toEqual([0, 1, 2, 3, 4]);
    expect(userPosts.of(users[2]!).map((p) => p.title)).toEqual(['u2@x/0', 'u2@x/1']);
  });

  it('preload belongsTo and manyToMany: one query each', async () => {
    const posts = await orm.query(Post).orderBy('id').preload('author', 'tags').all();
    expect(fx.counting.count).toBe(3);
    expect(posts.map((p) => postAuthor.of(p)?.email)).toEqual(posts.map((p) => p.title.split('/')[0]));
    expect(posts.map((p) => postTags.of(p).map((t) => t.label).join(''))).toEqual(posts.map((_, i) => 'abc'.slice(0, i % 3)));
    expect(typeof postAuthor.of(posts[0]!)!.id).toBe('bigint');
  });

  it('nested preloads: each level is one query (users → posts → tags, comments)', async () => {
    const users = await orm.query(User).orderBy('id').preload('posts', 'posts.tags', 'posts.comments').all();
    // users, posts, tags, comments
    expect(fx.counting.count).toBe(4);
    const u4 = users[4]!;
    const posts = userPosts.of(u4);
    expect(posts).toHaveLength(4);
    expect(posts.map((p) => postComments.of(p).map((c) => c.text))).toEqual(posts.map((p) => [`${p.title} c1`, `${p.title} c2`]));
    expect(posts.every((p) => Array.isArray(postTags.of(p)))).toBe(true);
  });

  it('the query count does not grow with the number of parents', async () => {
    await orm.insertMany(User, Array.from({ length: 200 }, (_, i) => ({ email: `more${i}@x` })));
    fx.counting.reset();
    const users = await orm.query(User).preload('posts', 'posts.author').all();
    expect(users).toHaveLength(205);
    expect(fx.counting.count).toBe(3);
  });

  it('preload on a page and on rows already read', async () => {
    const page = await orm.query(Post).where(eq(Post.c.authorId, 4n)).orderBy('id').preload('comments').paginate({ limit: 3 });
    expect(page.rows.map((p) => postComments.of(p).length)).toEqual([2, 2, 2]);
    const rows = await orm.query(Post).where(eq(Post.c.authorId, 3n)).all();
    fx.counting.reset();
    await orm.preload(Post, rows, 'author', 'tags');
    expect(fx.counting.count).toBe(2);
    expect(rows.map((p) => postAuthor.of(p)?.email)).toEqual(['u2@x', 'u2@x']);
  });

  it('no parents, no relation queries; unknown relations and unloaded reads are typed errors', async () => {
    const none = await orm.query(User).where({ email: 'nobody' }).preload('posts', 'posts.tags').all();
    expect(none).toEqual([]);
    expect(fx.counting.count).toBe(1);
    await expect(orm.query(User).preload('nope').all()).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(User).preload('posts.nope').all()).rejects.toBeInstanceOf(InvalidQuery);
    const user = (await orm.query(User).first())!;
    expect(() => userPosts.of(user)).toThrow(InvalidQuery);
    expect(() => belongsTo(Post, 'author', User, { foreignKey: 'authorId' })).toThrow(InvalidModel);
    expect(() => belongsTo(Post, 'title', User, { foreignKey: 'authorId' })).toThrow(InvalidModel);
  });

  it('keys of every kind meet: bytes and uuid keys (bytes fall back to IN lists on SQLite)', async () => {
    const Box = defineModel(`boxes_${backend.name}`, { id: field.bytes().primaryKey(), tag: field.uuid() });
    const Item = defineModel(`items_${backend.name}`, { id: field.int32().primaryKey(), boxId: field.bytes(), label: field.text() });
    const boxItems = hasMany(Box, 'items', Item, { foreignKey: 'boxId' });
    await orm.createTables(Box, Item);
    const boxes = await orm.insertMany(Box, [
      { id: Buffer.from([1, 2]), tag: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' },
      { id: Buffer.from([3]), tag: 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12' },
    ]);
    expect(boxes[0]!.tag).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
    await orm.insertMany(Item, [
      { id: 1, boxId: Buffer.from([1, 2]), label: 'x' },
      { id: 2, boxId: Buffer.from([1, 2]), label: 'y' },
      { id: 3, boxId: Buffer.from([3]), label: 'z' },
    ]);
    fx.counting.reset();
    const loaded = await orm.query(Box).orderBy('tag').preload('items').all();
    expect(fx.counting.count).toBe(2);
    expect(loaded.map((b) => boxItems.of(b).map((i) => i.label))).toEqual([['x', 'y'], ['z']]);
  });

  it('preloads inside a transaction run on its connection', async () => {
    const count = await orm.transaction(async (tx) => {
      const users = await tx.query(User).preload('posts').all();
      return users.reduce((n, u) => n + userPosts.of(u).length, 0);
    });
    expect(count).toBe(10);
    expect(fx.counting.dataStatements).toHaveLength(2);
  });
});

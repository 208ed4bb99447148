/**
 * Keyset pagination on both backends: pages cover every row exactly once in order, across ties and
 * mixed directions, over joins; cursors that do not fit (or are forged) are refused with a typed
 * error; optimistic locking matches and increments versions and reports the current one on conflict.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError, InvalidQuery } from '../../../src/data/index.js';
import { eq, gt, Orm } from '../../../src/data/orm/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { ormFixture, Post, User, type OrmFixture } from './core-support.js';

describe.each(BACKENDS)('ORM pagination and locking on $name', (backend) => {
  let fx: OrmFixture;
  let orm: Orm;
  openForEachTest(backend, async (opened) => {
    fx = await ormFixture(opened);
    orm = fx.orm;
  });

  async function seed(n: number): Promise<void> {
    const users = await orm.insertMany(User, [{ email: 'a@x' }, { email: 'b@x', active: false }]);
    await orm.insertMany(
      Post,
      Array.from({ length: n }, (_, i) => ({ authorId: users[i % 2]!.id, title: `p${String(i).padStart(3, '0')}`, score: i % 7 })),
    );
  }

  it('walks every row once, in order, with ties broken by the primary key', async () => {
    await seed(53);
    const seen: bigint[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<ReturnType<Orm['query']>['paginate']>> = await orm.query(Post).orderBy('score', 'desc').paginate({ after, limit: 10 });
      seen.push(...page.rows.map((p) => (p as { id: bigint }).id));
      after = page.next;
      pages++;
    } while (after !== null);
    expect(pages).toBe(6);
    const expected = (await orm.query(Post).orderBy('score', 'desc').orderBy('id').all()).map((p) => p.id);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(53);
  });

  it('an exact multiple of the page size ends with next = null on the last full page', async () => {
    await seed(20);
    const first = await orm.query(Post).orderBy('id').paginate({ limit: 10 });
    const second = await orm.query(Post).orderBy('id').paginate({ after: first.next, limit: 10 });
    expect(second.rows).toHaveLength(10);
    expect(second.next).toBeNull();
  });

  it('paginates a filtered join selecting columns of both tables', async () => {
    await seed(30);
    const query = () =>
      orm
        .query(Post)
        .join(User, eq(Post.c.authorId, User.c.id))
        .where(eq(User.c.active, true))
        .select({ id: Post.c.id, title: Post.c.title, author: User.c.email })
        .orderBy(Post.c.id);
    const titles: string[] = [];
    let after: string | null = null;
    do {
      const page = await query().paginate({ after, limit: 4 });
      titles.push(...page.rows.map((r) => r.title));
      expect(page.rows.every((r) => r.author === 'a@x')).toBe(true);
      after = page.next;
    } while (after !== null);
    expect(titles).toEqual(Array.from({ length: 15 }, (_, i) => `p${String(i * 2).padStart(3, '0')}`));
  });

  it('refuses forged or mismatched cursors, nullable order columns and unselected order columns', async () => {
    await seed(5);
    const page = await orm.query(Post).orderBy('score').paginate({ limit: 2 });
    await expect(orm.query(Post).orderBy('id').paginate({ after: page.next, limit: 2 })).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(Post).paginate({ after: 'not a cursor!', limit: 2 })).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(Post).paginate({ after: Buffer.from('[{"b":"1; DROP"}]').toString('base64url'), limit: 2 })).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(Post).paginate({ after: 'x'.repeat(5000), limit: 2 })).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(User).orderBy('name').paginate({ limit: 2 })).rejects.toThrow(/nullable/);
    await expect(orm.query(Post).select('title').paginate({ limit: 2 })).rejects.toThrow(/select it/);
    await expect(orm.query(Post).paginate({ limit: 0 })).rejects.toBeInstanceOf(InvalidQuery);
    await expect(orm.query(Post).paginate({ limit: 10_001 })).rejects.toBeInstanceOf(InvalidQuery);
  });

  it('optimistic locking: an update matches the version and increments it; a stale write fails with the current version', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    const post = await orm.insert(Post, { authorId: user.id, title: 'v1' });
    expect(post.version).toBe(1n);
    const mine = { ...post };
    const theirs = await orm.update(Post, post, { title: 'theirs' });
    expect(theirs.version).toBe(2n);
    const error = await orm.update(Post, mine, { title: 'mine' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ table: 'posts', expectedVersion: 1n, currentVersion: 2n, primaryKey: post.id });
    // Re-read, then the write goes through.
    const fresh = await orm.findOrThrow(Post, post.id);
    const mineAgain = await orm.update(Post, fresh, { title: 'mine' });
    expect(mineAgain).toMatchObject({ title: 'mine', version: 3n });
    // A versioned update without the version is refused rather than blind.
    await expect(orm.update(Post, { id: post.id }, { title: 'blind' })).rejects.toBeInstanceOf(InvalidQuery);
    // Stale delete: conflict; a deleted row: conflict with currentVersion null.
    await expect(orm.delete(Post, { id: post.id, version: 1n })).rejects.toMatchObject({ currentVersion: 3n });
    expect(await orm.delete(Post, mineAgain)).toBe(true);
    await expect(orm.update(Post, mineAgain, { title: 'gone' })).rejects.toMatchObject({ code: 'ORM_CONFLICT', currentVersion: null });
  });

  it('bulk updates of a versioned model increment every version', async () => {
    await seed(4);
    await orm.query(Post).where(gt(Post.c.score, 1)).update({ body: 'x' });
    const versions = (await orm.query(Post).orderBy('id').all()).map((p) => [p.score, p.version]);
    expect(versions).toEqual([
      [0, 1n],
      [1, 1n],
      [2, 2n],
      [3, 2n],
    ]);
  });

  it('concurrent writers of the same row: exactly one wins, the other gets ConflictError', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    const post = await orm.insert(Post, { authorId: user.id, title: 'v1' });
    const results = await Promise.allSettled([orm.update(Post, post, { title: 'a' }), orm.update(Post, post, { title: 'b' })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBeInstanceOf(ConflictError);
    expect((await orm.findOrThrow(Post, post.id)).version).toBe(2n);
  });
});

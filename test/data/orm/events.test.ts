/**
 * Write events on both backends: published only after COMMIT (nothing for a rollback or a failed
 * savepoint), once per written row, in (commitSeq, statementSeq) order; a write outside a
 * transaction publishes at once; the channel fits the cache's `subscribe(fn) → unsubscribe`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WriteEventSource } from '../../../src/data/cache/invalidation.js';
import { Registry } from 'prom-client';
import { ConflictError, InvalidDataConfig } from '../../../src/data/index.js';
import { gt, Orm, WriteEventChannel, type OrmWriteEvent } from '../../../src/data/orm/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';
import { ormFixture, Post, PostTag, User, type OrmFixture } from './core-support.js';

describe.each(BACKENDS)('ORM write events on $name', (backend) => {
  let fx: OrmFixture;
  let orm: Orm;
  let events: OrmWriteEvent[];
  let unsubscribe: () => void;

  openForEachTest(backend, async (opened) => {
    fx = await ormFixture(opened);
    orm = fx.orm;
    events = [];
    unsubscribe = orm.events.subscribe((event) => events.push(event));
  });
  afterEach(() => unsubscribe());

  const brief = (e: OrmWriteEvent) => [e.table, e.op, e.primaryKey, e.version];

  it('a write outside a transaction publishes as soon as it returns', async () => {
    const user = await orm.insert(User, { email: 'a@x' });
    expect(events.map(brief)).toEqual([['users', 'insert', 1n, undefined]]);
    await orm.update(User, user, { name: 'A' });
    await orm.delete(User, user);
    expect(events.map(brief)).toEqual([
      ['users', 'insert', 1n, undefined],
      ['users', 'update', 1n, undefined],
      ['users', 'delete', 1n, undefined],
    ]);
    // Each implicit transaction has its own id and commit sequence.
    expect(events.map((e) => e.commitSeq)).toEqual([1, 2, 3]);
    expect(new Set(events.map((e) => e.txId)).size).toBe(3);
    expect(events.every((e) => e.statementSeq === 1)).toBe(true);
  });

  it('inside a transaction nothing is published before COMMIT; then all, in statement order', async () => {
    let seenInside = -1;
    await orm.transaction(async (tx) => {
      const user = await tx.insert(User, { email: 'a@x' });
      const post = await tx.insert(Post, { authorId: user.id, title: 't' });
      await tx.update(Post, post, { title: 'u' });
      await tx.insertMany(PostTag, [
        { postId: post.id, tagId: 1 },
        { postId: post.id, tagId: 2 },
      ]);
      seenInside = events.length;
    });
    expect(seenInside).toBe(0);
    expect(events.map(brief)).toEqual([
      ['users', 'insert', 1n, undefined],
      ['posts', 'insert', 1n, 1n],
      ['posts', 'update', 1n, 2n],
      ['post_tags', 'insert', [1n, 1], undefined],
      ['post_tags', 'insert', [1n, 2], undefined],
    ]);
    expect(events.map((e) => e.statementSeq)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(events.map((e) => e.commitSeq))).toEqual(new Set([1]));
    expect(new Set(events.map((e) => e.txId)).size).toBe(1);
  });

  it('a rolled-back transaction publishes nothing', async () => {
    await expect(
      orm.transaction(async (tx) => {
        await tx.insert(User, { email: 'a@x' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(events).toEqual([]);
    expect(await orm.query(User).count()).toBe(0);
  });

  it('a failed savepoint drops its events; the outer transaction keeps its own', async () => {
    await orm.transaction(async (tx) => {
      await tx.insert(User, { email: 'kept@x' });
      await expect(
        tx.transaction(async (inner) => {
          await inner.insert(User, { email: 'dropped@x' });
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
      await tx.transaction(async (inner) => {
        await inner.insert(User, { email: 'nested@x' });
      });
    });
    expect(events.map((e) => [e.op, e.statementSeq])).toEqual([
      ['insert', 1],
      ['insert', 2],
    ]);
    expect((await orm.query(User).orderBy('id').all()).map((u) => u.email)).toEqual(['kept@x', 'nested@x']);
  });

  it('bulk writes publish one event per row; commit sequences increase across transactions', async () => {
    await orm.insertMany(User, [{ email: 'a@x' }, { email: 'b@x' }, { email: 'c@x' }]);
    await orm.query(User).where(gt(User.c.id, 1n)).update({ name: 'n' });
    await orm.query(User).delete();
    expect(events.map((e) => [e.op, e.commitSeq])).toEqual([
      ['insert', 1],
      ['insert', 1],
      ['insert', 1],
      ['update', 2],
      ['update', 2],
      ['delete', 3],
      ['delete', 3],
      ['delete', 3],
    ]);
    expect(orm.events.lastCommitSeq).toBe(3);
  });

  it('concurrent transactions: each commit is one contiguous run of events, sequences strictly increasing', async () => {
    await Promise.all(
      Array.from({ length: 6 }, (_, t) =>
        orm.transaction(async (tx) => {
          for (let i = 0; i < 3; i++) await tx.insert(User, { email: `${t}-${i}@x` });
        }),
      ),
    );
    expect(events).toHaveLength(18);
    for (let i = 1; i < events.length; i++) {
      const [a, b] = [events[i - 1]!, events[i]!];
      expect(b.commitSeq > a.commitSeq || (b.commitSeq === a.commitSeq && b.statementSeq === a.statementSeq + 1)).toBe(true);
    }
    expect(new Set(events.map((e) => e.commitSeq)).size).toBe(6);
  });

  it('upsert reports insert or update correctly', async () => {
    await orm.upsert(User, { id: 5n, email: 'a@x' });
    await orm.upsert(User, { id: 5n, email: 'a@x', name: 'b' });
    expect(events.map((e) => e.op)).toEqual(['insert', 'update']);
  });

  it('a throwing subscriber is isolated: the write succeeds and others still get the event', async () => {
    const off = orm.events.subscribe(() => {
      throw new Error('broken subscriber');
    });
    const after: string[] = [];
    const off2 = orm.events.subscribe((e) => after.push(e.op));
    await orm.insert(User, { email: 'a@x' });
    expect(after).toEqual(['insert']);
    expect(events).toHaveLength(1);
    expect(orm.events.listenerErrors).toBe(1);
    off();
    off2();
  });

  it('counts conflicts and throwing subscribers in its metrics', async () => {
    const registry = new Registry();
    const metered = new Orm(fx.counting, { metrics: registry });
    const off = metered.events.subscribe(() => {
      throw new Error('broken');
    });
    const user = await metered.insert(User, { email: 'a@x' });
    const post = await metered.insert(Post, { authorId: user.id, title: 't' });
    await metered.update(Post, post, { title: 'u' });
    await expect(metered.update(Post, post, { title: 'v' })).rejects.toBeInstanceOf(ConflictError);
    off();
    const text = await registry.metrics();
    expect(text).toMatch(/molo_orm_conflicts_total\{table="posts"\} 1/);
    expect(text).toMatch(/molo_orm_event_listener_errors_total 3/);
  });

  it('fits the cache: a WriteEventSource; subscribers are capped', () => {
    const source: WriteEventSource = orm.events;
    expect(typeof source.subscribe).toBe('function');
    const channel = new WriteEventChannel({ maxSubscribers: 2 });
    channel.subscribe(() => undefined);
    const off = channel.subscribe(() => undefined);
    expect(() => channel.subscribe(() => undefined)).toThrow(InvalidDataConfig);
    off();
    expect(channel.subscribers).toBe(1);
    expect(() => new WriteEventChannel({ maxSubscribers: 5000 })).toThrow(InvalidDataConfig);
  });
});

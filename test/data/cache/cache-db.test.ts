/**
 * The cache in front of real databases (SQLite file, the machine's Postgres): 100 concurrent reads
 * of one row run one query, and a write announced on the write channel (as the ORM will announce
 * it) invalidates the cached read, so the next read sees the write.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { Cache, rowTag, type WriteEvent, type WriteEventSource } from '../../../src/data/cache/index.js';
import type { Database } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

describe.each(BACKENDS)('cache over $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let db: Database;
  const events = new EventEmitter();
  const writes: WriteEventSource = {
    subscribe(listener) {
      events.on('write', listener);
      return () => void events.off('write', listener);
    },
  };

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    db = opened.db;
    await db.query('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
    await db.query("INSERT INTO users (id, name) VALUES (1, 'alice'), (2, 'bob')");
  });

  afterEach(async () => {
    await opened.dispose();
    system.shutdown();
  });

  /** A write as the ORM will do it: the statement, then one event per row after commit. */
  const rename = async (id: number, name: string): Promise<void> => {
    await db.query('UPDATE users SET name = $1 WHERE id = $2', [name, id]);
    const event: WriteEvent = { table: 'users', primaryKey: id, op: 'update', version: null, txId: null };
    events.emit('write', event);
  };

  it('100 concurrent reads of one row run one query; a write event invalidates the cached read', async () => {
    const cache = new Cache<string>();
    const stop = cache.invalidateOn(writes);
    let queries = 0;
    const nameOf = (id: number) =>
      cache.getOrCompute(
        `user:${id}:name`,
        async () => {
          queries++;
          return (await db.query<{ name: string }>('SELECT name FROM users WHERE id = $1', [id])).rows[0]!.name;
        },
        { tags: [rowTag('users', id)] },
      );

    expect(new Set(await Promise.all(Array.from({ length: 100 }, () => nameOf(1))))).toEqual(new Set(['alice']));
    expect(queries).toBe(1);
    expect(cache.get('user:1:name')).toBe('alice');
    expect(await nameOf(2)).toBe('bob');

    await rename(1, 'alicia');
    expect(cache.get('user:1:name')).toBeUndefined();
    expect(cache.get('user:2:name')).toBe('bob');
    expect(await nameOf(1)).toBe('alicia');
    expect(queries).toBe(3);
    stop();
  });
});

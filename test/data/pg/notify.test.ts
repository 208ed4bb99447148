/**
 * LISTEN/NOTIFY through the real server: notifications from another session reach the handlers,
 * channel names are quoted (exact spelling, never SQL), unlisten stops delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres, type PgNotification } from '../../../src/data/pg/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { eventually } from '../../support/systems.js';
import { configOf, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgnotify');
});
afterAll(() => db.drop());

describe('listen', () => {
  it('delivers notifications from another session to every handler of the channel, until unlistened', async () => {
    await withConnection(db, async (listener, system) => {
      const notifier = await connectPostgres(system, configOf(db));
      try {
        const first: PgNotification[] = [];
        const second: string[] = [];
        const stopFirst = await listener.listen('events', (_payload, n) => first.push(n));
        const stopSecond = await listener.listen('events', (payload) => second.push(payload));
        expect(listener.channels).toEqual(['events']);
        expect(listener.handlersOf('events')).toHaveLength(2);
        await notifier.query("select pg_notify('events', $1)", ['hello']);
        await notifier.query("notify events, 'plain'");
        // Delivered while the listener is idle: nothing in flight carries it.
        await eventually(() => second.length === 2, 3_000, 'notifications');
        expect(second).toEqual(['hello', 'plain']);
        expect(first.map((n) => [n.channel, n.payload, n.processId])).toEqual([
          ['events', 'hello', notifier.backendPid],
          ['events', 'plain', notifier.backendPid],
        ]);
        await stopFirst();
        await notifier.query("select pg_notify('events', 'after')");
        await eventually(() => second.length === 3, 3_000, 'third notification');
        expect(first).toHaveLength(2);
        await stopSecond();
        expect(listener.channels).toEqual([]);
        expect((await listener.query('select pg_listening_channels() as c')).rows).toEqual([]);
        await notifier.query("select pg_notify('events', 'unheard')");
        await listener.ping();
        expect(second).toHaveLength(3);
      } finally {
        await notifier.close();
      }
    });
  });

  it('quotes channel names: case, spaces, quotes and SQL stay part of the name', async () => {
    await withConnection(db, async (conn) => {
      const odd = ['Mixed Case', 'quote"d', 'x"; drop table t; --'];
      const got: string[] = [];
      for (const channel of odd) await conn.listen(channel, (payload, n) => got.push(`${n.channel}=${payload}`));
      const listening = await conn.query<{ c: string }>('select pg_listening_channels() as c order by 1');
      expect(listening.rows.map((r) => r.c)).toEqual([...odd].sort());
      for (const channel of odd) await conn.query('select pg_notify($1, $2)', [channel, 'p']);
      await eventually(() => got.length === 3, 3_000, 'notifications');
      expect(got.sort()).toEqual(odd.map((c) => `${c}=p`).sort());
      await expect(conn.listen('', () => undefined)).rejects.toThrow(/channel/);
      await expect(conn.listen('x'.repeat(64), () => undefined)).rejects.toThrow(/channel/);
    });
  });

  it('a handler that throws stops neither the other handlers nor the connection', async () => {
    await withConnection(db, async (conn) => {
      const got: string[] = [];
      await conn.listen('boom', () => {
        throw new Error('handler bug');
      });
      await conn.listen('boom', (payload) => got.push(payload));
      // Notifications interleave with pipelined statements.
      const results = await Promise.all([conn.query("select pg_notify('boom', 'a')"), conn.query('select $1::int4 as n', [1]), conn.query("select pg_notify('boom', 'b')")]);
      expect(results[1]!.rows).toEqual([{ n: 1 }]);
      await eventually(() => got.length === 2, 3_000, 'notifications');
      expect(got).toEqual(['a', 'b']);
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    });
  });
});

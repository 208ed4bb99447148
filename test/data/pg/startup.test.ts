/**
 * Connecting: SSL refusal, refused and silent servers, auth methods refused or allowed (fake
 * servers on real sockets speak the startup side), custom types resolved at connect, metrics.
 */
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailed, AuthMethodRefused, ConnectFailed, DbError, InvalidDataConfig } from '../../../src/data/errors.js';
import { Msg } from '../../../src/data/pg/frames.js';
import { connectPostgres, PgTypes } from '../../../src/data/pg/index.js';
import { freshDatabase, psql, type FreshDatabase } from '../../support/pg.js';
import { backendMessage, be, int32, startFakePg, type FakePg } from '../../support/pg-fake.js';
import { testSystem } from '../../support/systems.js';
import { configOf, rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgstartup');
  psql("create type mood as enum ('sad', 'ok', 'happy')", db.database);
});
afterAll(() => db.drop());

const message = (type: number, body: Buffer): Buffer => backendMessage(String.fromCharCode(type), body);
const auth = (code: number, extra = Buffer.alloc(0)): Buffer => message(Msg.Authentication, Buffer.concat([int32(code), extra]));
const welcome = Buffer.concat([be.authOk(), be.backendKey(1, 2), be.ready()]);

/** A fake server: `onMessage` sees each client message after the startup packet (type, body). */
function fakeServer(onStartup: (socket: Socket) => void, onMessage: (socket: Socket, type: number, body: Buffer) => void = () => undefined): Promise<FakePg> {
  return startFakePg({ startup: (session) => onStartup(session.socket), message: (session, type, body) => onMessage(session.socket, type.charCodeAt(0), body) });
}

describe('connect', () => {
  it('ssl requested and refused by the server (it answers N): ConnectFailed', async () => {
    const error = await rejection(connectPostgres(testSystem(), configOf(db, { ssl: true })));
    expect(error).toBeInstanceOf(ConnectFailed);
    expect(error.message).toContain('refused SSL');
  });

  it('a closed port fails with ConnectFailed; a silent server with ConnectFailed at connectTimeoutMs', async () => {
    const closed = await fakeServer(() => undefined);
    const port = closed.port;
    await closed.close();
    const refused = await rejection(connectPostgres(testSystem(), { host: '127.0.0.1', port, user: 'u' }));
    expect(refused).toBeInstanceOf(ConnectFailed);
    expect((refused as DbError).retryable).toBe(true);
    const silent = await fakeServer(() => undefined);
    try {
      const started = Date.now();
      const timedOut = await rejection(connectPostgres(testSystem(), { host: '127.0.0.1', port: silent.port, user: 'u', connectTimeoutMs: 300 }));
      expect(timedOut).toBeInstanceOf(ConnectFailed);
      expect(timedOut.message).toContain('connectTimeoutMs');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await silent.close();
    }
    await expect(connectPostgres(testSystem(), { host: '127.0.0.1', user: 'u', maxInFlight: 5_000 })).rejects.toBeInstanceOf(InvalidDataConfig);
  });

  it('cleartext and MD5 are refused unless allowed; allowed, they send the right response', async () => {
    const seen: string[] = [];
    const cleartext = await fakeServer(
      (socket) => socket.write(auth(3)),
      (socket, type, body) => {
        seen.push(`${String.fromCharCode(type)}:${body.toString('utf8', 0, body.length - 1)}`);
        socket.write(welcome);
      },
    );
    const salt = Buffer.from([1, 2, 3, 4]);
    const md5 = await fakeServer(
      (socket) => socket.write(auth(5, salt)),
      (socket, _type, body) => {
        const inner = createHash('md5').update('pw').update('alice').digest('hex');
        const expected = 'md5' + createHash('md5').update(inner).update(salt).digest('hex');
        if (body.toString('utf8', 0, body.length - 1) === expected) socket.write(welcome);
        else socket.end(message(Msg.ErrorResponse, Buffer.from('SFATAL\0C28P01\0Mpassword authentication failed\0\0')));
      },
    );
    try {
      const system = testSystem();
      const refused = (await rejection(connectPostgres(system, { host: '127.0.0.1', port: cleartext.port, user: 'alice', password: 'pw' }))) as AuthMethodRefused;
      expect(refused).toBeInstanceOf(AuthMethodRefused);
      expect(refused.option).toBe('allowCleartext');
      expect(seen).toEqual([]);
      const plain = await connectPostgres(system, { host: '127.0.0.1', port: cleartext.port, user: 'alice', password: () => Promise.resolve('pw'), allowCleartext: true });
      expect(seen).toEqual(['p:pw']);
      expect(plain.backendPid).toBe(1);
      await plain.close();

      const md5Refused = (await rejection(connectPostgres(system, { host: '127.0.0.1', port: md5.port, user: 'alice', password: 'pw' }))) as AuthMethodRefused;
      expect(md5Refused).toBeInstanceOf(AuthMethodRefused);
      expect(md5Refused.option).toBe('allowMd5');
      const hashed = await connectPostgres(system, { host: '127.0.0.1', port: md5.port, user: 'alice', password: 'pw', allowMd5: true });
      await hashed.close();
      const wrong = (await rejection(connectPostgres(system, { host: '127.0.0.1', port: md5.port, user: 'alice', password: 'not-the-pw', allowMd5: true }))) as AuthFailed;
      expect(wrong).toBeInstanceOf(AuthFailed);
      expect(wrong.sqlstate).toBe('28P01');
      expect(wrong.connection).toEqual({ backend: 'postgres', host: '127.0.0.1', port: md5.port, database: 'alice', user: 'alice' });
      expect(JSON.stringify({ ...wrong, message: wrong.message, stack: wrong.stack })).not.toContain('not-the-pw');
      // No password configured, or a method we do not speak.
      expect(await rejection(connectPostgres(system, { host: '127.0.0.1', port: md5.port, user: 'alice', allowMd5: true }))).toBeInstanceOf(AuthFailed);
    } finally {
      await cleartext.close();
      await md5.close();
    }
    const gss = await fakeServer((socket) => socket.write(auth(7)));
    try {
      const error = await rejection(connectPostgres(testSystem(), { host: '127.0.0.1', port: gss.port, user: 'alice' }));
      expect(error).toBeInstanceOf(ConnectFailed);
      expect(error.message).toContain('GSSAPI');
    } finally {
      await gss.close();
    }
  });

  it('linked to a parent (a supervisor), the connection goes down with it and its socket is closed', async () => {
    const system = testSystem();
    const parent = system.spawn(() => undefined);
    const conn = await connectPostgres(system, configOf(db), undefined, { link: parent });
    expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    const boom = new Error('supervisor crashed');
    system.exit(parent, boom);
    expect(await conn.ended).toBe(boom);
    expect(conn.open).toBe(false);
  });

  it('resolves custom types by name from pg_type when connecting', async () => {
    const types = new PgTypes();
    types.register({ name: 'mood', decode: (text) => `<${text}>`, encode: (value) => String(value).replace(/[<>]/g, '') });
    expect(types.pendingNames()).toEqual(['mood']);
    await withConnection(
      db,
      async (conn) => {
        expect(types.pendingNames()).toEqual([]);
        // Unnamed first use (parameter type not known yet), then prepared (text), then binary-capable path.
        for (let run = 0; run < 3; run++) {
          const r = await conn.query<{ m: string; ms: string[] }>("select $1::mood as m, array['sad', 'ok']::mood[] as ms", ['happy']);
          expect(r.rows[0]).toEqual({ m: '<happy>', ms: ['<sad>', '<ok>'] });
        }
      },
      { types },
    );
  });

  it('records statement latency and errors in the configured registry', async () => {
    const registry = new Registry();
    await withConnection(
      db,
      async (conn) => {
        for (let i = 0; i < 5; i++) await conn.query('select $1::int4', [i]);
        await rejection(conn.query('select nope'));
      },
      { metrics: registry },
    );
    const text = await registry.metrics();
    expect(text).toMatch(/molo_pg_statement_duration_seconds_count 6/);
    expect(text).toMatch(/molo_pg_statement_errors_total\{code="DB_QUERY_FAILED"\} 1/);
  });
});

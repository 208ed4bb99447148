/**
 * A connection to a TLS-only cluster (SCRAM passwords): statements, a statement timeout whose
 * CancelRequest must itself go over TLS, and a server restart ending the connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isShutdownWith } from '../../../src/actors/index.js';
import { ConnectionLost, StatementTimeout } from '../../../src/data/errors.js';
import { connectPostgres, type PgConfig } from '../../../src/data/pg/index.js';
import { startCluster, type Cluster } from '../../support/pg-cluster.js';
import { testSystem } from '../../support/systems.js';
import { rejection } from './pg-support.js';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ requireTls: true });
}, 60_000);
afterAll(() => cluster?.stop());

function config(): PgConfig {
  const { name, password } = cluster.users.superuser;
  return { host: cluster.host, port: cluster.port, user: name, password: () => Promise.resolve(password), database: cluster.database, ssl: { ca: cluster.caCert! } };
}

describe('over TLS', () => {
  it('runs statements, and cancels a timed-out one with a CancelRequest over TLS', async () => {
    const conn = await connectPostgres(testSystem(), config());
    try {
      expect((await conn.query('select ssl from pg_stat_ssl where pid = pg_backend_pid()')).rows).toEqual([{ ssl: true }]);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => conn.query<{ n: number }>('select $1::int4 as n', [i])));
      expect(results.map((r) => r.rows[0]!.n)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      const started = Date.now();
      expect(await rejection(conn.query('select pg_sleep(5)', undefined, { timeoutMs: 200 }))).toBeInstanceOf(StatementTimeout);
      // Only a cancel that reached the server lets the next statement run this soon.
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await conn.close();
    }
  });

  it('a server restart ends the connection: ConnectionLost with the server reason, the actor exits', async () => {
    const conn = await connectPostgres(testSystem(), config());
    const running = rejection(conn.query('select pg_sleep(10)'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await cluster.restart({ mode: 'fast' });
    const error = await running;
    expect(error).toBeInstanceOf(ConnectionLost);
    expect((error as ConnectionLost).sqlstate).toBe('57P01');
    const reason = await conn.ended;
    expect(isShutdownWith(reason)).toBe(true);
    const again = await connectPostgres(testSystem(), config());
    expect((await again.query('select 2 as n')).rows).toEqual([{ n: 2 }]);
    await again.close();
  }, 30_000);
});

/**
 * Password authentication through our client (connectPostgres) against a real Postgres 15 cluster
 * started for this file with SCRAM, MD5 and cleartext roles and a self-signed TLS certificate.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailed, AuthMethodRefused, ConnectFailed, DbError } from '../../../src/data/errors.js';
import { saslprepPassword } from '../../../src/data/pg/auth.js';
import type { PgConfig } from '../../../src/data/pg/config.js';
import { connectPostgres } from '../../../src/data/pg/index.js';
import { createLogger } from '../../../src/telemetry/index.js';
import { startCluster, type Cluster } from '../../support/pg-cluster.js';
import { testSystem } from '../../support/systems.js';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ tls: true });
}, 60_000);
afterAll(() => cluster?.stop());

/** Every log line the system writes, at every level. */
function collectingSystem(): { system: ReturnType<typeof testSystem>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ level: 'trace', destination });
  return { system: testSystem({ logger }), lines };
}

function configFor(user: { name: string; password: string }, extra: Partial<PgConfig> = {}): PgConfig {
  return { host: cluster.host, port: cluster.port, user: user.name, database: cluster.database, password: user.password, ...extra };
}

type Connection = Awaited<ReturnType<typeof connectPostgres>>;

/** Connects, runs `sql`, closes; returns the first row. */
async function withConnection<T>(config: PgConfig, body: (connection: Connection) => Promise<T>): Promise<T> {
  const { system } = collectingSystem();
  const connection = await connectPostgres(system, config);
  try {
    return await body(connection);
  } finally {
    await connection.close();
  }
}

async function firstRow(config: PgConfig, sql: string): Promise<Record<string, unknown>> {
  return withConnection(config, async (connection) => (await connection.query(sql, undefined, undefined)).rows[0] as Record<string, unknown>);
}

/** Rejects with what connectPostgres threw; fails the test if it connected. */
async function connectError(config: PgConfig, system = collectingSystem().system): Promise<unknown> {
  try {
    const connection = await connectPostgres(system, config);
    await connection.close();
  } catch (error) {
    return error;
  }
  throw new Error('connected, but a failure was expected');
}

/** The error and everything reachable from it, as text: message, stack, fields, causes. */
function everything(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    parts.push(String(current), inspect(current, { depth: 6, showHidden: true }));
    if (current instanceof Error) parts.push(current.stack ?? '');
    try {
      parts.push(JSON.stringify(current));
    } catch {
      // circular: inspect covered it
    }
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

/** The password and what could be derived from it and stand in for it. */
function secretsOf(user: string, password: string): string[] {
  return [
    password,
    saslprepPassword(password),
    Buffer.from(password).toString('base64'),
    Buffer.from(password).toString('hex'),
    createHash('md5').update(password + user).digest('hex'),
  ];
}

describe('SCRAM-SHA-256', () => {
  it('connects with the right password and runs a query', async () => {
    const row = await firstRow(configFor(cluster.users.superuser), 'select 1 as one, current_user as who');
    expect(row).toEqual({ one: 1, who: cluster.users.superuser.name });
  });

  it('takes the password from a function, called when the server asks', async () => {
    let calls = 0;
    const password = (): Promise<string> => {
      calls++;
      return Promise.resolve(cluster.users.superuser.password);
    };
    expect(await firstRow(configFor(cluster.users.superuser, { password }), 'select 2 as two')).toEqual({ two: 2 });
    expect(calls).toBe(1);
  });

  it('a wrong password gives one AuthFailed with redacted server info and no secret anywhere', async () => {
    const { system, lines } = collectingSystem();
    const wrong = `${cluster.users.superuser.password}-wrong`;
    const error = await connectError(configFor(cluster.users.superuser, { password: wrong }), system);
    expect(error).toBeInstanceOf(AuthFailed);
    const failure = error as AuthFailed;
    expect(failure.code).toBe('DB_AUTH_FAILED');
    expect(failure.retryable).toBe(false);
    expect(failure.sqlstate).toBe('28P01');
    expect(failure.connection).toEqual({ backend: 'postgres', host: cluster.host, port: cluster.port, user: cluster.users.superuser.name, database: 'postgres' });
    const text = everything(failure);
    for (const secret of [...secretsOf(cluster.users.superuser.name, wrong), ...secretsOf(cluster.users.superuser.name, cluster.users.superuser.password)]) {
      expect(text).not.toContain(secret);
    }
    // One failure, reported once: no retry storm of attempts, no duplicate events.
    // One failure, reported once: one structured event naming the server, no retry storm.
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.event === 'pg.auth_failed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ connection: failure.connection, sqlstate: '28P01' });
    for (const line of lines) expect(line).not.toContain(wrong);
    const attempts = cluster.log().split('\n').filter((line) => line.includes(`password authentication failed for user "${cluster.users.superuser.name}"`));
    expect(attempts.length).toBeGreaterThanOrEqual(1);
  });

  it('an unknown user is AuthFailed too, not a hint that the user does not exist', async () => {
    const error = await connectError(configFor({ name: 'molo_nobody', password: 'x-secret-x' }));
    expect(error).toBeInstanceOf(AuthFailed);
    expect(everything(error)).not.toContain('x-secret-x');
  });
});

describe('SASLprep', () => {
  // Postgres normalizes a password with SASLprep when it stores it (CREATE/ALTER ROLE ... PASSWORD),
  // falling back to the raw bytes when SASLprep rejects it; the client must do the same.
  const role = 'molo_saslprep';
  beforeAll(async () => {
    await cluster.psql(`CREATE ROLE ${role} LOGIN`);
  });

  async function setPassword(password: string): Promise<void> {
    await cluster.psql(`ALTER ROLE ${role} PASSWORD '${password.replace(/'/g, "''")}'`);
  }
  const login = (password: string): Promise<Record<string, unknown>> => firstRow(configFor({ name: role, password }), 'select current_user as who');

  it('a password with U+2168 and U+00A0 logs in as typed and in its normalized form', async () => {
    await setPassword('\u2168-pass\u00A0word');
    expect(await login('\u2168-pass\u00A0word')).toEqual({ who: role });
    expect(await login('IX-pass word')).toEqual({ who: role });
    // Compatibility forms that SASLprep maps to the same string are the same password.
    expect(await login('I\u00ADX-pass\u2003word')).toEqual({ who: role });
    await expect(login('IX-pass  word')).rejects.toBeInstanceOf(AuthFailed);
  });

  it('a normalized stored password accepts the composed and decomposed forms', async () => {
    await setPassword('caf\u00E9-\u00AA');
    expect(await login('cafe\u0301-a')).toEqual({ who: role });
  });

  it('a password SASLprep rejects is used raw, by the server and by us', async () => {
    // U+2028 is prohibited; U+0221 is unassigned in Unicode 3.2 (so 'e\u0301' must stay decomposed).
    for (const password of ['\u00E9t\u00E9\u2028x', 'e\u0301\u0221-raw', '\u05D0abc']) {
      await setPassword(password);
      expect(await login(password), JSON.stringify(password)).toEqual({ who: role });
    }
    await setPassword('e\u0301\u0221-raw');
    await expect(login('\u00E9\u0221-raw')).rejects.toBeInstanceOf(AuthFailed);
  });
});

describe('MD5 and cleartext', () => {
  it('refuses MD5 by default, naming allowMd5, and accepts it when allowed', async () => {
    const { md5 } = cluster.users;
    const error = await connectError(configFor(md5));
    expect(error).toBeInstanceOf(AuthMethodRefused);
    expect((error as AuthMethodRefused).code).toBe('DB_AUTH_METHOD_REFUSED');
    expect((error as AuthMethodRefused).message).toMatch(/allowMd5/);
    expect((error as AuthMethodRefused).option).toMatch(/allowMd5/);
    expect(everything(error)).not.toContain(md5.password);
    expect(await firstRow(configFor(md5, { allowMd5: true }), 'select current_user as who')).toEqual({ who: md5.name });
    const wrong = await connectError(configFor({ name: md5.name, password: 'not-it-secret' }, { allowMd5: true }));
    expect(wrong).toBeInstanceOf(AuthFailed);
    expect(everything(wrong)).not.toContain('not-it-secret');
  });

  it('refuses cleartext by default, naming allowCleartext, and accepts it when allowed', async () => {
    const { cleartext } = cluster.users;
    const error = await connectError(configFor(cleartext, { allowMd5: true }));
    expect(error).toBeInstanceOf(AuthMethodRefused);
    expect((error as AuthMethodRefused).message).toMatch(/allowCleartext/);
    expect(everything(error)).not.toContain(cleartext.password);
    expect(await firstRow(configFor(cleartext, { allowCleartext: true }), 'select current_user as who')).toEqual({ who: cleartext.name });
  });

  it('allowing weaker methods does not weaken a SCRAM role', async () => {
    const row = await firstRow(configFor(cluster.users.superuser, { allowMd5: true, allowCleartext: true }), 'select 1 as one');
    expect(row).toEqual({ one: 1 });
  });
});

describe('TLS', () => {
  const sslInUse = 'select ssl from pg_stat_ssl where pid = pg_backend_pid()';

  it('verifies the server against the given CA and runs over TLS', async () => {
    expect(await firstRow(configFor(cluster.users.superuser, { ssl: { ca: cluster.caCert! } }), sslInUse)).toEqual({ ssl: true });
    // Password auth over TLS, the case where cleartext would be least bad: still refused by default.
    const refused = await connectError(configFor(cluster.users.cleartext, { ssl: { ca: cluster.caCert! } }));
    expect(refused).toBeInstanceOf(AuthMethodRefused);
  });

  it('without the CA, a verifying connection fails with a typed error', async () => {
    for (const ssl of [{ rejectUnauthorized: true }, true] as const) {
      const error = await connectError(configFor(cluster.users.superuser, { ssl }));
      expect(error).toBeInstanceOf(DbError);
      expect(error).toBeInstanceOf(ConnectFailed);
      expect(everything(error)).not.toContain(cluster.users.superuser.password);
    }
  });

  it('without ssl the same server is reached in plain text', async () => {
    expect(await firstRow(configFor(cluster.users.superuser), sslInUse)).toEqual({ ssl: false });
  });
});

describe('logs', () => {
  it('no log line carries a password, whatever happened to the connection', async () => {
    const { system, lines } = collectingSystem();
    const { superuser, md5, cleartext } = cluster.users;
    const good = await connectPostgres(system, configFor(superuser));
    await good.query('select 1', undefined, undefined);
    await good.close();
    for (const config of [configFor(superuser, { password: 'bad-secret-1' }), configFor(md5), configFor(cleartext, { allowMd5: true }), configFor(superuser, { ssl: true })]) {
      await connectError(config, system);
    }
    // The collector sees the driver's events (so the checks below are not vacuous).
    const events = lines.map((line) => (JSON.parse(line) as { event?: string }).event);
    expect(events).toContain('pg.connected');
    expect(events.filter((event) => event === 'pg.auth_failed')).toHaveLength(1);
    const secrets = [superuser, md5, cleartext].flatMap((user) => secretsOf(user.name, user.password)).concat('bad-secret-1');
    for (const line of lines) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
  });
});

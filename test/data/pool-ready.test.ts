/**
 * `ready()` says why at startup, and an outage is logged once: through a real closed loopback port
 * (free a moment ago, nobody listening) and the machine's Postgres, which has no TLS. The pino
 * lines of the system and of the pool are captured (one logger injected into both) and counted
 * by level. Before: `ready()` waited 5 s and every reconnect logged a level-50
 * `supervisor.start_error`; an sslmode the server refuses was retried as an outage.
 */
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import { ConnectFailed } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../src/data/postgres.js';
import { createLogger } from '../../src/telemetry/index.js';
import { PG_HOST, PG_PORT, PG_USER } from '../support/pg.js';
import { eventually, sleep, testSystem } from '../support/systems.js';

interface Line {
  readonly level: number;
  readonly event?: string;
  readonly msg?: string;
  readonly [key: string]: unknown;
}

let system: ActorSystem | undefined;
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
  system = undefined;
});

/** A system whose logger (also handed to the pool) keeps every line, debug and up. */
function capturedSystem(): { system: ActorSystem; lines: Line[]; logger: ReturnType<typeof createLogger> } {
  const lines: Line[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
  system = testSystem({ logger });
  return { system, lines, logger };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP server forwarding each connection to the machine's Postgres: "the server comes up". */
function forwarder(): Server {
  return createServer((client) => {
    const upstream = createConnection(PG_PORT, PG_HOST);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
}

const byLevel = (lines: readonly Line[], level: number): Line[] => lines.filter((line) => line.level === level);

describe('ready() and the log of an unreachable server', () => {
  it('ready() rejects after the first failed attempt, with its cause; the pool goes on reconnecting in the background', async () => {
    const { system, lines, logger } = capturedSystem();
    const port = await closedPort();
    // acquireTimeoutMs is the default 5 s: ready() must not wait for it.
    const db = await createPostgresPool(system, { host: '127.0.0.1', port, user: 'postgres', env: false, reconnectInitialMs: 20, reconnectMaxMs: 40, logger });
    opened.push(db);
    const started = Date.now();
    const error = await db.ready().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(ConnectFailed);
    expect(error).toMatchObject({ code: 'DB_CONNECT_FAILED', retryable: true });
    expect((error as Error).message).toMatch(/^connect failed: pool pg\d+ could not connect: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    // The cause is the attempt's own error, whose cause is the socket's.
    const cause = (error as Error).cause as Error & { cause?: NodeJS.ErrnoException };
    expect(cause).toBeInstanceOf(ConnectFailed);
    expect(cause.cause?.code).toBe('ECONNREFUSED');

    // Several more attempts fail meanwhile: one warning (with the backoff) for the outage, repeats at debug, no error at all.
    await eventually(() => lines.filter((line) => line.event === 'pool.connect_failed').length >= 4, 5_000, 'reconnect attempts');
    expect(byLevel(lines, 50)).toEqual([]);
    expect(byLevel(lines, 60)).toEqual([]);
    const warnings = byLevel(lines, 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: 'pool.connect_failed', attempt: 1, retryInMs: 20, err: expect.stringMatching(/ECONNREFUSED/) });
    expect(warnings[0]!.msg).toMatch(/retrying in 20 ms with backoff/);
    const repeats = lines.filter((line) => line.event === 'pool.connect_failed' && line.level === 20);
    expect(repeats.length).toBeGreaterThanOrEqual(3);
    expect(repeats.every((line) => typeof line.retryInMs === 'number' && (line.retryInMs as number) <= 40)).toBe(true);
    expect(lines.some((line) => line.msg === 'supervisor.start_error' || line.event === 'supervisor.start_error')).toBe(false);

    // The server comes up: the background reconnects find it without anyone asking.
    const proxy = forwarder();
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    try {
      await eventually(() => db.health().healthy, 5_000, 'reconnected in the background');
      await db.ready();
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
      expect(lines.filter((line) => line.event === 'pool.connected' && line.level === 30)).toHaveLength(1);
      expect(byLevel(lines, 50)).toEqual([]);
    } finally {
      await db.close();
      proxy.close();
    }
  });

  it('ready() without a timeout rejects at once between attempts; with one, it waits through the reconnects', async () => {
    const { system } = capturedSystem();
    const port = await closedPort();
    const db = await createPostgresPool(system, { host: '127.0.0.1', port, user: 'postgres', env: false, min: 1, reconnectInitialMs: 200 });
    opened.push(db);
    // The first attempt failed during createPostgresPool; the next is due in 200 ms. ready() rejects at once all the same.
    const started = Date.now();
    await expect(db.ready()).rejects.toBeInstanceOf(ConnectFailed);
    expect(Date.now() - started).toBeLessThan(150);
    // With a timeout of its own, ready() waits through the reconnects instead (to its timeout here).
    const waited = Date.now();
    await expect(db.ready({ timeoutMs: 500 })).rejects.toThrow(/no connection after 500 ms .*ECONNREFUSED/);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(450);
  });

  it('an sslmode the server refuses is a configuration error: not retryable, failing at once, logged as no error', async () => {
    const { system, lines, logger } = capturedSystem();
    const started = Date.now();
    const error = await createPostgresPool(system, { url: `postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/postgres?sslmode=require`, env: false, logger }).then(
      (db) => {
        opened.push(db);
        return db.ready().then(() => undefined, (thrown: unknown) => thrown);
      },
      (thrown: unknown) => thrown,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(ConnectFailed);
    expect(error).toMatchObject({ code: 'DB_CONNECT_FAILED', retryable: false });
    expect((error as Error).message).toMatch(/refused SSL .*ssl is required .*sslmode=require/);
    // Nothing is retried: no pool is left, and a while later no attempt has been made or logged.
    await sleep(200);
    expect(system.registered().filter((name) => name.startsWith('molo.pool.'))).toEqual([]);
    expect(byLevel(lines, 50)).toEqual([]);
  });
});

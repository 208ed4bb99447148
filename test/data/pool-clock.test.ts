/**
 * The pool's checkout timeout, ready timeout and reconnect backoff follow the system's clock: with
 * a SimulatedClock, real time passing times nothing out, and moving the clock alone does.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock, type ActorSystem } from '../../src/actors/index.js';
import { AcquireTimeout } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase, type PostgresPoolConfig } from '../../src/data/postgres.js';
import { freshDatabase, type FreshDatabase } from '../support/pg.js';
import { eventually, sleep, testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let system: ActorSystem;
let clock: SimulatedClock;
const opened: PostgresDatabase[] = [];

beforeAll(() => {
  fresh = freshDatabase('poolclock');
});
afterAll(() => fresh?.drop());
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
});

async function open(config: PostgresPoolConfig): Promise<PostgresDatabase> {
  clock = new SimulatedClock();
  system = testSystem({ clock });
  const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, ...config });
  opened.push(db);
  return db;
}

describe('pool on the injected clock', () => {
  it('a checkout waits until the simulated clock passes acquireTimeoutMs, however long real time runs', async () => {
    const db = await open({ min: 1, max: 1, acquireTimeoutMs: 5_000 });
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await eventually(() => release !== undefined, 5_000, 'transaction started');
    let outcome: unknown = 'pending';
    const waiting = db.transaction(async () => 'ran').then(
      (value) => (outcome = value),
      (error: unknown) => (outcome = error),
    );
    await sleep(400);
    expect(outcome).toBe('pending');
    await clock.advanceAsync(4_999);
    expect(outcome).toBe('pending');
    await clock.advanceAsync(1);
    // At once on the clock's move, long before the 5 s of real time the old timers took.
    await eventually(() => outcome !== 'pending', 2_000, 'the checkout timed out');
    await waiting;
    expect(outcome).toBeInstanceOf(AcquireTimeout);
    release();
    await held;
    // The pool still serves once the holder let go.
    expect((await db.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
  });

  it('reconnect attempts to a server that is down wait for the simulated backoff', async () => {
    // A port that accepts and hangs up at once: each attempt fails fast, and is counted.
    let attempts = 0;
    const server: Server = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      clock = new SimulatedClock();
      system = testSystem({ clock });
      const db = await createPostgresPool(system, { host: '127.0.0.1', port, user: 'nobody', database: 'none', min: 1, reconnectInitialMs: 1_000, reconnectMaxMs: 1_000 });
      opened.push(db);
      await eventually(() => attempts >= 1, 5_000, 'first attempt');
      await sleep(300);
      const before = attempts;
      await sleep(1_500);
      // Real seconds pass: no new attempt while the clock stands still.
      expect(attempts).toBe(before);
      await clock.advanceAsync(1_000);
      await eventually(() => attempts > before, 5_000, 'attempt after the simulated backoff');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

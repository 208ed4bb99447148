/**
 * Leader leases on both SQL backends, on a simulated clock: the lease actors and the KV store share
 * one SimulatedClock (the database itself runs on real time in its own system).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock, type ActorSystem, type Ref } from '../../../src/actors/index.js';
import { GenServer, Supervisor } from '../../../src/behaviours/index.js';
import type { Database } from '../../../src/data/index.js';
import { openKv, type KvStore, type SqlKvStore } from '../../../src/data/kv/index.js';
import {
  LEASE_DEFAULTS,
  LeaderLease,
  StaleFencingToken,
  checkFence,
  createFenceTable,
  highestFencingToken,
  leaderLeaseChild,
  readLease,
  type LeaseEvent,
  type LeaseStatus,
} from '../../../src/bus/index.js';
import { eventuallyAsync } from '../../data/kv/stores.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, openForEachTest } from '../../data/backends.js';

/** A KV store whose calls can be held back, as if its process were paused (SIGSTOP, a long GC). */
function pausable(store: KvStore): { store: KvStore; pause(): void; resume(): void } {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (gate !== undefined) await gate;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    pause: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    resume: () => {
      gate = undefined;
      open?.();
    },
  };
}

it('lease defaults: 10 s TTL, renewed every 3 s, 1 s safety margin', () => {
  expect(LEASE_DEFAULTS).toEqual({ ttlMs: 10_000, renewEveryMs: 3_000, safetyMarginMs: 1_000 });
});

describe.each(BACKENDS)('leader lease on $name', (backend) => {
  let db: Database;
  let clock: SimulatedClock;
  let leases: ActorSystem;
  let stores: SqlKvStore[];

  openForEachTest(backend, async (opened) => {
    db = opened.db;
  });
  beforeEach(() => {
    clock = new SimulatedClock(0, Date.UTC(2026, 0, 1));
    leases = testSystem({ node: 'leases', clock });
    stores = [];
  });
  afterEach(async () => {
    await leases.shutdown();
    for (const store of stores) await store.close();
  });

  /** A store on the shared table, as another process would open it. */
  async function store(): Promise<SqlKvStore> {
    const opened = await openKv(db, { clock, table: 'lease_kv', sweepIntervalMs: 3_600_000 });
    stores.push(opened);
    return opened;
  }

  const status = (ref: Ref): Promise<LeaseStatus> => LeaderLease.status(leases, ref);

  /** Waits (in real time) until no lease actor has a store call under way. */
  async function settle(refs: readonly Ref[]): Promise<LeaseStatus[]> {
    let last: LeaseStatus[] = [];
    await eventuallyAsync(async () => {
      last = await Promise.all(refs.map(status));
      return last.every((s) => !s.pending);
    }, 10_000, 'lease calls to settle');
    return last;
  }

  /** Advances the clock in steps, settling after each, asserting at most one leader at every step. */
  async function run(refs: readonly Ref[], totalMs: number, stepMs = 500): Promise<LeaseStatus[]> {
    let now = await settle(refs);
    for (let elapsed = 0; elapsed < totalMs; elapsed += stepMs) {
      clock.advance(stepMs);
      now = await settle(refs);
      expect(now.filter((s) => s.role === 'leader').length, `leaders at ${clock.now()} ms`).toBeLessThanOrEqual(1);
    }
    return now;
  }

  function recorder(): { events: (LeaseEvent & { at: number })[]; onEvent: (event: LeaseEvent) => void } {
    const events: (LeaseEvent & { at: number })[] = [];
    return { events, onEvent: (event) => events.push({ ...event, at: clock.now() }) };
  }

  it('two contenders on one store: exactly one leader, which keeps the lease by renewing', async () => {
    const a = recorder();
    const b = recorder();
    const refA = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'a', onEvent: a.onEvent });
    const refB = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'b', onEvent: b.onEvent });
    const final = await run([refA, refB], 60_000);
    expect(final.filter((s) => s.role === 'leader')).toHaveLength(1);
    // One election over a minute: the leader renewed every 3 s, the follower never got in.
    expect([...a.events, ...b.events].map((e) => e.type)).toEqual(['elected']);
    const leader = final.find((s) => s.role === 'leader')!;
    const record = await readLease(stores[0]!, 'molo:lease:scheduler');
    expect(record).toMatchObject({ holder: leader.holder, token: leader.token });
    // Renewals moved the version on, not the token.
    expect(record!.version).toBeGreaterThan(record!.token);
  });

  it('a leader that stops renewing is replaced after the TTL, with a higher token', async () => {
    const a = recorder();
    const b = recorder();
    const refA = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'a', onEvent: a.onEvent });
    await settle([refA]);
    expect((await status(refA)).role).toBe('leader');
    const refB = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'b', onEvent: b.onEvent });
    await run([refA, refB], 4_000);
    // Killed outright: no terminate, so the lease is not released; only its TTL frees it.
    const lastRenewal = Math.floor(clock.now() / LEASE_DEFAULTS.renewEveryMs) * LEASE_DEFAULTS.renewEveryMs;
    leases.exit(refA, 'kill');
    await run([refB], 15_000);
    expect(b.events.map((e) => e.type)).toEqual(['elected']);
    const takeover = b.events[0]!.at;
    expect(takeover).toBeGreaterThanOrEqual(lastRenewal + LEASE_DEFAULTS.ttlMs);
    expect(takeover).toBeLessThanOrEqual(lastRenewal + LEASE_DEFAULTS.ttlMs + LEASE_DEFAULTS.renewEveryMs);
    expect(b.events[0]!.token).toBeGreaterThan(a.events[0]!.token);
  });

  it('a stopped leader releases the lease: the follower takes over on its next try', async () => {
    const b = recorder();
    const refA = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'a' });
    await settle([refA]);
    const refB = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'b', onEvent: b.onEvent });
    await settle([refB]);
    await GenServer.stop(leases, refA);
    const stoppedAt = clock.now();
    await run([refB], 3_000);
    expect(b.events.map((e) => e.type)).toEqual(['elected']);
    expect(b.events[0]!.at - stoppedAt).toBeLessThanOrEqual(LEASE_DEFAULTS.renewEveryMs);
  });

  it('supervised: the lease child leads, and the supervisor stopping releases the lease', async () => {
    const kv = await store();
    const sup = await Supervisor.start(leases, { strategy: 'one_for_one', children: [leaderLeaseChild('lease', { store: kv, name: 'scheduler', holder: 's' })] });
    const [child] = await Supervisor.whichChildren(leases, sup);
    const ref = child!.ref as Ref;
    await settle([ref]);
    expect((await status(ref)).role).toBe('leader');
    expect((await readLease(kv, 'molo:lease:scheduler'))?.holder).toBe('s');
    await Supervisor.stop(leases, sup);
    expect(await readLease(kv, 'molo:lease:scheduler')).toBeUndefined();
  });

  it('a paused leader steps down before its TTL ends; resumed, its fenced write is refused', async () => {
    await createFenceTable(db);
    const a = recorder();
    const b = recorder();
    const paused = pausable(await store());
    const refA = await LeaderLease.startLease(leases, { store: paused.store, name: 'scheduler', holder: 'a', onEvent: a.onEvent });
    await settle([refA]);
    const tokenA = (await status(refA)).token!;
    // The leader fires a scheduled enqueue: fenced, in the enqueue's transaction.
    await db.transaction(async (tx) => {
      await checkFence(tx, 'nightly-report', tokenA);
    });
    const refB = await LeaderLease.startLease(leases, { store: await store(), name: 'scheduler', holder: 'b', onEvent: b.onEvent });
    await settle([refA, refB]);
    const pausedAt = clock.now();
    paused.pause();
    // A's renewals hang; its own timer deposes it 1 s before the store's expiry, B takes over after it.
    for (let elapsed = 0; elapsed < 15_000; elapsed += 500) {
      clock.advance(500);
      await settle([refB]);
      const [sa, sb] = [await status(refA), await status(refB)];
      expect(sa.role === 'leader' && sb.role === 'leader', `two leaders at ${clock.now()}`).toBe(false);
    }
    expect(a.events.map((e) => [e.type, e.type === 'deposed' ? e.reason : undefined])).toEqual([
      ['elected', undefined],
      ['deposed', 'expired'],
    ]);
    const deposedAt = a.events[1]!.at;
    expect(deposedAt).toBeLessThanOrEqual(pausedAt + LEASE_DEFAULTS.ttlMs - LEASE_DEFAULTS.safetyMarginMs);
    expect(b.events.map((e) => e.type)).toEqual(['elected']);
    expect(b.events[0]!.at).toBeGreaterThan(deposedAt);
    const tokenB = b.events[0]!.token;
    expect(tokenB).toBeGreaterThan(tokenA);
    await db.transaction(async (tx) => {
      await checkFence(tx, 'nightly-report', tokenB);
    });
    // A wakes up and, not knowing better, fires with its old token: refused, and its transaction rolls back.
    paused.resume();
    await db.query('CREATE TABLE IF NOT EXISTS fenced_runs (id text PRIMARY KEY)');
    const late = db.transaction(async (tx) => {
      await tx.query('INSERT INTO fenced_runs (id) VALUES ($1)', ['late-run']);
      await checkFence(tx, 'nightly-report', tokenA);
    });
    await expect(late).rejects.toBeInstanceOf(StaleFencingToken);
    await expect(late).rejects.toMatchObject({ code: 'LEASE_STALE_FENCING_TOKEN', key: 'nightly-report', token: tokenA, highest: tokenB });
    expect((await db.query('SELECT count(*) AS n FROM fenced_runs')).rows[0]!.n).toBe(backend.name === 'postgres' ? 0n : 0);
    expect(await highestFencingToken(db, 'nightly-report')).toBe(tokenB);
    await settle([refA, refB]);
    // Resumed, A is a follower and stays one while B renews.
    await run([refA, refB], 6_000);
    expect((await status(refA)).role).toBe('follower');
    expect((await status(refB)).role).toBe('leader');
  });
});

describe.each(BACKENDS)('fencing check on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, async (opened) => {
    db = opened.db;
    await createFenceTable(db);
    await createFenceTable(db);
  });

  it('accepts equal and higher tokens, refuses lower ones per key, inside the caller’s transaction', async () => {
    const fence = (key: string, token: number): Promise<void> => db.transaction((tx) => checkFence(tx, key, token));
    await fence('a', 5);
    await fence('a', 5);
    await fence('a', 7);
    await expect(fence('a', 6)).rejects.toBeInstanceOf(StaleFencingToken);
    await fence('b', 1);
    expect(await highestFencingToken(db, 'a')).toBe(7);
    expect(await highestFencingToken(db, 'b')).toBe(1);
    expect(await highestFencingToken(db, 'c')).toBeNull();
    // A transaction that rolls back for another reason leaves the highest token where it was.
    await expect(
      db.transaction(async (tx) => {
        await checkFence(tx, 'a', 9);
        throw new Error('enqueue failed');
      }),
    ).rejects.toThrow('enqueue failed');
    expect(await highestFencingToken(db, 'a')).toBe(7);
  });

  it('refuses bad keys, tokens and table names', async () => {
    await expect(db.transaction((tx) => checkFence(tx, '', 1))).rejects.toThrow(/fence.key/);
    await expect(db.transaction((tx) => checkFence(tx, 'a', -1))).rejects.toThrow(/fence.token/);
    await expect(db.transaction((tx) => checkFence(tx, 'a', 1.5))).rejects.toThrow(/fence.token/);
    await expect(createFenceTable(db, 'x; DROP TABLE y')).rejects.toThrow(/fence.table/);
  });

  it('concurrent checks of one key: the lower token loses whichever commits first', async () => {
    if (backend.name !== 'postgres') return;
    // Both transactions open at once; the higher token's upsert holds the row until it commits.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const high = db.transaction(async (tx) => {
      await checkFence(tx, 'k', 10);
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const low = db.transaction((tx) => checkFence(tx, 'k', 9));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await high;
    await expect(low).rejects.toBeInstanceOf(StaleFencingToken);
  });
});

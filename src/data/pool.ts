/**
 * A pool of connections, written once for every backend against `DriverConnection`.
 *
 * Two ways to use a connection:
 * - shared (transaction pooling, the default): a statement outside a transaction goes to the open
 *   connection with the fewest statements in flight and is pipelined there; nobody waits unless
 *   every connection is leased.
 * - leased (`acquire`): a transaction or a pinned session has the connection to itself until it
 *   releases it. Checkouts wait at most `acquireTimeoutMs`, and at most `maxWaiters` callers wait;
 *   one more fails fast with PoolExhausted.
 *
 * A lost connection is expected, not a crash: the pool drops it and reconnects with capped
 * exponential backoff, reporting itself unhealthy while it cannot.
 */
import type { Registry } from 'prom-client';
import { clockInterval, systemClock, type Clock, type ClockInterval, type ClockTimer } from '../actors/clock.js';
import type { Logger } from '../telemetry/index.js';
import { remainingMs, type DataContext } from './context.js';
import type { DriverConnection, Connector } from './driver.js';
import type { DatabaseHealth } from './database.js';
import { AcquireTimeout, InvalidDataConfig, PoolClosed, PoolExhausted, type DbError } from './errors.js';
import { dataMetrics, type DataMetrics } from './metrics.js';
import { ConnectAttempts, describe, isPermanent } from './pool-attempts.js';
import { resolvePoolConfig, type PoolConfig, type ResolvedPoolConfig } from './pool-config.js';

export interface PoolOptions<C extends DriverConnection> {
  /** Names the pool in metrics and logs. */
  readonly name: string;
  readonly connector: Connector<C>;
  readonly config?: PoolConfig;
  /** Backend defaults under the caller's config (SQLite's differ from Postgres's). */
  readonly defaults?: ResolvedPoolConfig;
  readonly metrics?: Registry;
  readonly logger?: Logger;
  /** Runs on every new connection before it is used (re-LISTEN after a reconnect, say). */
  readonly onConnect?: (conn: C) => Promise<void> | void;
  /** Checkout and ready timeouts, reconnect backoff, idle and lifetime reaping follow it (the system's clock; ages on its monotonic `now`). */
  readonly clock?: Clock;
}

/** A connection checked out for one caller; `release` hands it back (or drops it when it broke). */
export interface Lease<C extends DriverConnection> {
  readonly conn: C;
  release(): void;
}

class Slot<C extends DriverConnection> {
  leased = false;
  lastUsed: number;
  /** Set while a shared connection idle past `probeAfterIdleMs` is pinged; settles true when it answered. */
  probe: Promise<boolean> | undefined = undefined;
  constructor(
    readonly conn: C,
    readonly createdAt: number,
  ) {
    this.lastUsed = createdAt;
  }
}

interface Waiter<C extends DriverConnection> {
  resolve(lease: Lease<C>): void;
  reject(error: unknown): void;
  timer: ClockTimer;
}

/**
 * A `ready()` caller: settled by the first good connection, a failure no retry can fix, or its
 * timer; one without a `timeoutMs` of its own (`untilConnected` false) also by the next failed attempt.
 */
interface ReadyWaiter {
  resolve(): void;
  reject(error: unknown): void;
  timer: ClockTimer;
  readonly untilConnected: boolean;
}

export interface ReadyOptions {
  /**
   * Wait this long for a connection, through the pool's reconnect attempts (for a script that
   * starts before its database). Without it, `ready()` settles with the first attempt's outcome:
   * it rejects as soon as an attempt failed (ConnectFailed with that attempt's error as `cause`),
   * bounded by the pool's `acquireTimeoutMs`, while the pool goes on reconnecting in the background.
   */
  readonly timeoutMs?: number;
}

export class Pool<C extends DriverConnection> {
  readonly name: string;
  readonly config: ResolvedPoolConfig;
  private readonly connector: Connector<C>;
  private readonly onConnect: ((conn: C) => Promise<void> | void) | undefined;
  private readonly metrics: DataMetrics | undefined;
  private readonly logger: Logger | undefined;
  private readonly slots: Slot<C>[] = [];
  private readonly waiters: Waiter<C>[] = [];
  private readonly readyWaiters: ReadyWaiter[] = [];
  private connecting = 0;
  private closed = false;
  private readonly attempts: ConnectAttempts;
  private readonly reaper: ClockInterval;
  private readonly clock: Clock;

  constructor(options: PoolOptions<C>) {
    this.name = options.name;
    this.config = resolvePoolConfig(options.config, options.defaults);
    this.connector = options.connector;
    this.onConnect = options.onConnect;
    this.metrics = dataMetrics(options.metrics);
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.attempts = new ConnectAttempts(this.name, this.clock, { initialMs: this.config.reconnectInitialMs, maxMs: this.config.reconnectMaxMs }, this.logger, this.metrics);
    this.reaper = clockInterval(this.clock, this.config.reapIntervalMs, () => this.reap());
  }

  /**
   * Opens the first connection. Rejects (and closes the pool) when that fails with an error no
   * retry can fix, such as bad credentials; a server that is merely down leaves the pool unhealthy
   * and reconnecting.
   */
  async start(ctx?: DataContext): Promise<void> {
    try {
      const conn = await this.connector(ctx);
      await this.adopt(conn);
    } catch (error) {
      if (isPermanent(error)) {
        await this.close();
        throw error;
      }
      this.connectFailed(error);
    }
    this.ensure();
  }

  /**
   * Resolves once the pool holds an open connection. Rejects with the reason when the last
   * connect failed in a way no retry fixes (credentials, unknown database, bad configuration);
   * without `timeoutMs`, also when the last attempt failed at all (ConnectFailed whose `cause` is
   * that attempt's error: a server that is down is said at startup, not after a timeout); with
   * `timeoutMs`, when none succeeded within it (a ConnectFailed carrying the last attempt's reason).
   */
  ready(options: ReadyOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new PoolClosed());
    if (this.slots.some((slot) => slot.conn.open)) return Promise.resolve();
    if (this.attempts.permanent) return Promise.reject(this.attempts.lastError);
    const untilConnected = options.timeoutMs !== undefined;
    if (!untilConnected && this.attempts.lastError !== undefined) return Promise.reject(this.attempts.attemptFailed(this.attempts.lastError));
    const timeoutMs = options.timeoutMs ?? this.config.acquireTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 300_000) {
      return Promise.reject(new InvalidDataConfig('ready.timeoutMs', `${String(timeoutMs)} is not an integer in 1..300000`));
    }
    this.ensure();
    return new Promise<void>((resolve, reject) => {
      const waiter: ReadyWaiter = {
        untilConnected,
        resolve,
        reject,
        timer: this.clock.setTimer(() => {
          this.readyWaiters.splice(this.readyWaiters.indexOf(waiter), 1);
          reject(this.unreachable(timeoutMs) ?? new AcquireTimeout(timeoutMs));
        }, timeoutMs),
      };
      this.readyWaiters.push(waiter);
    });
  }

  /** Callers waiting for a checkout now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * The shared connection with the fewest statements in flight; grows the pool when all are busy.
   * Undefined when none is usable now, including while the only candidates are being probed after
   * an idle spell (`run` waits for that probe instead of queueing for a checkout).
   */
  shared(): C | undefined {
    let best: Slot<C> | undefined;
    for (const slot of this.slots) {
      if (slot.leased || slot.probe !== undefined || !slot.conn.open) continue;
      if (best === undefined || slot.conn.inFlight < best.conn.inFlight) best = slot;
    }
    if (best === undefined || best.conn.inFlight > 0) this.grow();
    if (best === undefined) return undefined;
    const now = this.clock.now();
    // A connection idle long enough to have died quietly is pinged before it carries statements again.
    if (best.conn.inFlight === 0 && now - best.lastUsed > this.config.probeAfterIdleMs) {
      this.probe(best);
      return this.shared();
    }
    best.lastUsed = now;
    return best.conn;
  }

  /**
   * Runs `fn` on a shared connection (or, when none is usable, a checked-out one), waking a waiter
   * once the connection goes idle. A burst that finds its connections being probed waits for the
   * probes, then shares the connections that answered: it must not fill the checkout queue.
   */
  async run<T>(ctx: DataContext | undefined, fn: (conn: C) => Promise<T>): Promise<T> {
    let conn = this.shared();
    for (let probe = this.pendingProbe(); conn === undefined && probe !== undefined; probe = this.pendingProbe()) {
      await probe;
      conn = this.shared();
    }
    if (conn === undefined) {
      const lease = await this.acquire(ctx);
      try {
        return await fn(lease.conn);
      } finally {
        lease.release();
      }
    }
    try {
      return await fn(conn);
    } finally {
      if (this.waiters.length > 0 && conn.inFlight === 0) this.wakeWaiter();
    }
  }

  /** Pings an idle shared connection once; drops it when it does not answer within the checkout timeout. */
  private probe(slot: Slot<C>): void {
    slot.probe = slot.conn.ping({ timeoutMs: this.config.acquireTimeoutMs }).then(
      () => {
        slot.probe = undefined;
        slot.lastUsed = this.clock.now();
        return true;
      },
      () => {
        slot.probe = undefined;
        this.drop(slot);
        return false;
      },
    );
  }

  private pendingProbe(): Promise<boolean> | undefined {
    for (const slot of this.slots) if (slot.probe !== undefined) return slot.probe;
    return undefined;
  }

  /** Checks out a connection for one caller alone. */
  acquire(ctx?: DataContext): Promise<Lease<C>> {
    if (this.closed) return Promise.reject(new PoolClosed());
    const now = this.clock.now();
    for (const slot of this.slots) {
      if (slot.leased || slot.probe !== undefined || slot.conn.inFlight > 0 || !slot.conn.open) continue;
      return this.checkout(slot, now, ctx);
    }
    // Nothing open and the last attempt failed for good: waiting cannot help, say why now.
    if (this.attempts.permanent && !this.slots.some((slot) => slot.conn.open)) {
      return Promise.reject(this.attempts.lastError);
    }
    this.grow();
    if (this.waiters.length >= this.config.maxWaiters) {
      this.metrics?.poolExhausted.inc({ pool: this.name });
      return Promise.reject(new PoolExhausted(this.config.maxWaiters));
    }
    // A caller's deadline is on the epoch scale of Date.now (DataContext); the wait itself is on the pool's clock.
    const timeoutMs = Math.min(this.config.acquireTimeoutMs, remainingMs(ctx));
    return new Promise<Lease<C>>((resolve, reject) => {
      const waiter: Waiter<C> = {
        resolve,
        reject,
        timer: this.clock.setTimer(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          this.metrics?.poolAcquireTimeouts.inc({ pool: this.name });
          reject(this.unreachable(timeoutMs) ?? new AcquireTimeout(timeoutMs, { cause: this.attempts.lastError }));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  health(): DatabaseHealth {
    let idle = 0;
    for (const slot of this.slots) if (!slot.leased && slot.conn.inFlight === 0) idle++;
    const failing = this.attempts.lastError !== undefined;
    const healthy = !this.closed && !failing && (this.slots.length > 0 || this.config.min === 0);
    const reason = this.closed ? 'closed' : failing ? describe(this.attempts.lastError) : healthy ? undefined : 'no connection yet';
    return { healthy, reason, connections: this.slots.length, idle, waiting: this.waiters.length };
  }

  /**
   * The connections' supervisor was started again (by the application's tree): drops what went
   * down with the old one and opens connections now, without waiting out a backoff.
   */
  reconnect(): void {
    if (this.closed) return;
    for (const slot of [...this.slots]) if (!slot.conn.open) this.drop(slot);
    this.attempts.reset();
    this.ensure();
  }

  /** Closes every connection; waiting and later callers get PoolClosed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reaper.cancel();
    this.attempts.cancel();
    for (const waiter of [...this.waiters.splice(0), ...this.readyWaiters.splice(0)]) {
      this.clock.clearTimer(waiter.timer);
      waiter.reject(new PoolClosed());
    }
    await Promise.all(this.slots.splice(0).map((slot) => slot.conn.close().catch(() => undefined)));
  }

  private async checkout(slot: Slot<C>, now: number, ctx: DataContext | undefined): Promise<Lease<C>> {
    slot.leased = true;
    if (now - slot.lastUsed > this.config.probeAfterIdleMs) {
      try {
        await slot.conn.ping(ctx);
      } catch {
        this.drop(slot);
        slot.leased = false;
        return this.acquire(ctx);
      }
    }
    return this.lease(slot);
  }

  private lease(slot: Slot<C>): Lease<C> {
    slot.leased = true;
    let released = false;
    return {
      conn: slot.conn,
      release: () => {
        if (released) return;
        released = true;
        slot.leased = false;
        slot.lastUsed = this.clock.now();
        if (!slot.conn.open || this.expired(slot, slot.lastUsed)) this.drop(slot);
        else if (this.waiters.length > 0) this.handOff(slot);
      },
    };
  }

  private wakeWaiter(): void {
    for (const slot of this.slots) {
      if (!slot.leased && slot.probe === undefined && slot.conn.inFlight === 0 && slot.conn.open) {
        this.handOff(slot);
        return;
      }
    }
  }

  private handOff(slot: Slot<C>): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) return;
    this.clock.clearTimer(waiter.timer);
    waiter.resolve(this.lease(slot));
  }

  /** Opens one more connection in the background, when there is room. */
  private grow(): void {
    if (this.closed || this.attempts.waiting) return;
    if (this.slots.length + this.connecting >= this.config.max) return;
    // One attempt at a time while nothing is waiting: a burst of statements must not open `max` sockets at once.
    if (this.connecting > 0 && this.connecting >= this.waiters.length) return;
    this.connecting++;
    this.connector(undefined).then(
      async (conn) => {
        this.connecting--;
        await this.adopt(conn);
        this.ensure();
      },
      (error: unknown) => {
        this.connecting--;
        this.connectFailed(error);
      },
    );
  }

  private async adopt(conn: C): Promise<void> {
    if (this.closed) {
      await conn.close().catch(() => undefined);
      return;
    }
    try {
      await this.onConnect?.(conn);
    } catch (error) {
      await conn.close().catch(() => undefined);
      this.connectFailed(error);
      return;
    }
    const slot = new Slot(conn, this.clock.now());
    this.slots.push(slot);
    this.attempts.succeeded();
    void conn.ended.then((reason) => {
      if (this.closed) return;
      this.logger?.debug({ event: 'pool.connection_ended', pool: this.name, reason: describe(reason) }, 'pool connection ended');
      this.drop(slot);
    });
    this.updateGauges();
    for (const waiter of this.readyWaiters.splice(0)) {
      this.clock.clearTimer(waiter.timer);
      waiter.resolve();
    }
    if (this.waiters.length > 0) this.handOff(slot);
  }

  /** When no connection is open and the last attempt failed: that failure, as the error a caller who waited `timeoutMs` gets. */
  private unreachable(timeoutMs: number): DbError | undefined {
    return this.slots.some((slot) => slot.conn.open) ? undefined : this.attempts.unreachable(timeoutMs);
  }

  private connectFailed(error: unknown): void {
    this.attempts.failed(error);
    if (isPermanent(error)) {
      // No retry fixes these: whoever waits for a connection learns why now, not at its timeout.
      for (const waiter of [...this.waiters.splice(0), ...this.readyWaiters.splice(0)]) {
        this.clock.clearTimer(waiter.timer);
        waiter.reject(error);
      }
      this.updateGauges();
    } else {
      // A ready() that asked for no timeout of its own wanted the attempt's outcome: this is it.
      for (const waiter of this.readyWaiters.filter((w) => !w.untilConnected)) {
        this.readyWaiters.splice(this.readyWaiters.indexOf(waiter), 1);
        this.clock.clearTimer(waiter.timer);
        waiter.reject(this.attempts.attemptFailed(error));
      }
    }
    if (this.closed) return;
    this.attempts.schedule(() => {
      this.ensure();
      // ensure() opens nothing when the pool is full of live connections; the failure is then over.
      if (this.connecting === 0) this.attempts.lastError = undefined;
    });
  }

  /** Keeps `min` connections, and one per waiter up to `max`. */
  private ensure(): void {
    const wanted = Math.max(this.config.min, Math.min(this.config.max, this.slots.length + this.waiters.length));
    if (this.slots.length + this.connecting < wanted) this.grow();
  }

  private drop(slot: Slot<C>): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (slot.conn.open) void slot.conn.close().catch(() => undefined);
    this.updateGauges();
    if (!this.closed) this.ensure();
  }

  private expired(slot: Slot<C>, now: number): boolean {
    return now - slot.createdAt >= this.config.maxLifetimeMs;
  }

  /** Closes idle connections above `min` and idle ones past their lifetime. */
  private reap(): void {
    const now = this.clock.now();
    // Shared statements on the fast path do not wake waiters when they finish; this tick does.
    if (this.waiters.length > 0) this.wakeWaiter();
    for (const slot of [...this.slots]) {
      if (slot.leased || slot.probe !== undefined || slot.conn.inFlight > 0) continue;
      const idleTooLong = now - slot.lastUsed >= this.config.idleTimeoutMs && this.slots.length > this.config.min;
      if (idleTooLong || this.expired(slot, now)) this.drop(slot);
    }
    this.updateGauges();
  }

  private updateGauges(): void {
    const metrics = this.metrics;
    if (metrics === undefined) return;
    let idle = 0;
    let leased = 0;
    for (const slot of this.slots) {
      if (slot.leased) leased++;
      else if (slot.conn.inFlight === 0) idle++;
    }
    metrics.poolConnections.set({ pool: this.name, state: 'idle' }, idle);
    metrics.poolConnections.set({ pool: this.name, state: 'leased' }, leased);
    metrics.poolConnections.set({ pool: this.name, state: 'busy' }, this.slots.length - idle - leased);
    metrics.poolWaiting.set({ pool: this.name }, this.waiters.length);
  }
}

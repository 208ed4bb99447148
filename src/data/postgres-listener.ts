/**
 * LISTEN for a pool: one connection kept for notifications. When it is lost, the listener takes a
 * new one (with capped backoff), LISTENs on every channel again, then runs the `onResync` hooks:
 * notifications sent while no connection listened are gone, and only the application knows how to
 * catch up (re-read a table, say).
 *
 * The retries run on the pool's clock, or, once `childSpec()` is placed in an application's tree,
 * in an actor of that tree (as Postgrex.Notifications is a process of its own): each retry is a
 * message in its mailbox from a timer it owns, and when it dies its supervisor starts another,
 * which takes over where it stood (the channels and handlers are here, not in the actor).
 */
import type { Clock } from '../actors/index.js';
import type { ChildSpec } from '../behaviours/index.js';
import { clockTimers, timerDriverChild, type WorkTimers } from './timer-driver.js';
import type { Logger } from '../telemetry/index.js';
import type { DataContext } from './context.js';
import type { NotificationHandler, PgConnection } from './pg/index.js';
import type { Lease, Pool } from './pool.js';

export interface ListenOptions {
  /** Runs after every reconnect, once all channels are listened to again. */
  readonly onResync?: () => void | Promise<void>;
  readonly ctx?: DataContext;
}

interface Channel {
  readonly handlers: Set<NotificationHandler>;
  /** UNLISTENs on the current connection. */
  unlisten: (() => Promise<void>) | undefined;
}

const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 10_000;


export class PostgresListener {
  readonly #channels = new Map<string, Channel>();
  readonly #resyncHooks = new Set<() => void | Promise<void>>();
  #lease: Lease<PgConnection> | undefined;
  #acquiring: Promise<PgConnection> | undefined;
  #retryTimer: unknown;
  #retryDelay = RETRY_INITIAL_MS;
  #closed = false;
  #timers: WorkTimers;

  constructor(
    private readonly pool: Pool<PgConnection>,
    private readonly logger: Logger | undefined,
    clock: Clock,
  ) {
    this.#timers = clockTimers(clock);
  }

  /** A child spec whose actor drives the re-LISTEN retries (see the module's comment). */
  childSpec(id: string): ChildSpec {
    return timerDriverChild(id, (timers) => this.#driveFrom(timers));
  }

  #driveFrom(timers: WorkTimers): void {
    const pending = this.#retryTimer !== undefined;
    if (pending) this.#timers.clear(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#timers = timers;
    // A retry the last driver had armed (or a connection lost while none drove): armed again here.
    if (pending || (this.#lease === undefined && this.#acquiring === undefined && this.#channels.size > 0)) this.#reconnect();
  }

  async listen(channel: string, handler: NotificationHandler, options: ListenOptions): Promise<() => Promise<void>> {
    const conn = await this.#connection(options.ctx);
    let entry = this.#channels.get(channel);
    if (entry === undefined) {
      entry = { handlers: new Set(), unlisten: undefined };
      this.#channels.set(channel, entry);
    }
    entry.handlers.add(handler);
    if (entry.unlisten === undefined) {
      try {
        entry.unlisten = await conn.listen(channel, this.#dispatcher(entry), options.ctx);
      } catch (error) {
        entry.handlers.delete(handler);
        if (entry.handlers.size === 0) this.#channels.delete(channel);
        throw error;
      }
    }
    const onResync = options.onResync;
    if (onResync !== undefined) this.#resyncHooks.add(onResync);
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      if (onResync !== undefined) this.#resyncHooks.delete(onResync);
      entry.handlers.delete(handler);
      if (entry.handlers.size > 0) return;
      this.#channels.delete(channel);
      const unlisten = entry.unlisten;
      entry.unlisten = undefined;
      await unlisten?.();
    };
  }

  /** Channels listened on now. */
  get channels(): string[] {
    return [...this.#channels.keys()];
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retryTimer !== undefined) this.#timers.clear(this.#retryTimer);
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease !== undefined) {
      await lease.conn.close().catch(() => undefined);
      lease.release();
    }
  }

  #dispatcher(entry: Channel): NotificationHandler {
    return (payload, notification) => {
      for (const handler of entry.handlers) handler(payload, notification);
    };
  }

  #connection(ctx: DataContext | undefined): Promise<PgConnection> {
    if (this.#lease !== undefined && this.#lease.conn.open) return Promise.resolve(this.#lease.conn);
    this.#acquiring ??= this.pool.acquire(ctx).then(
      (lease) => {
        this.#acquiring = undefined;
        this.#adopt(lease);
        return lease.conn;
      },
      (error: unknown) => {
        this.#acquiring = undefined;
        throw error;
      },
    );
    return this.#acquiring;
  }

  #adopt(lease: Lease<PgConnection>): void {
    this.#lease = lease;
    void lease.conn.ended.then(() => {
      if (this.#lease !== lease) return;
      this.#lease = undefined;
      lease.release();
      for (const entry of this.#channels.values()) entry.unlisten = undefined;
      if (!this.#closed && this.#channels.size > 0) this.#reconnect();
    });
  }

  #reconnect(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    this.#retryTimer = this.#timers.set(() => {
      this.#retryTimer = undefined;
      void this.#relisten().then(
        () => {
          this.#retryDelay = RETRY_INITIAL_MS;
        },
        (error: unknown) => {
          this.logger?.warn({ event: 'pg.relisten_failed', err: error instanceof Error ? error.message : String(error), retryInMs: this.#retryDelay }, 're-LISTEN failed');
          this.#retryDelay = Math.min(this.#retryDelay * 2, RETRY_MAX_MS);
          this.#reconnect();
        },
      );
    }, this.#retryDelay);
  }

  async #relisten(): Promise<void> {
    const conn = await this.#connection(undefined);
    for (const [channel, entry] of this.#channels) {
      if (entry.unlisten === undefined) entry.unlisten = await conn.listen(channel, this.#dispatcher(entry));
    }
    this.logger?.info({ event: 'pg.relistened', channels: this.#channels.size }, 'notifications resumed after reconnect');
    for (const hook of this.#resyncHooks) {
      try {
        await hook();
      } catch (error) {
        this.logger?.error({ event: 'pg.resync_hook_failed', err: error instanceof Error ? error.message : String(error) }, 'a resync hook failed');
      }
    }
  }
}

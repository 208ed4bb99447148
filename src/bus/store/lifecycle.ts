/**
 * The open/close life shared by the SQL stores (the stream store, the task queue): their waiters
 * (a Wakeup), on Postgres a LISTEN on `<prefix>_wake` that wakes them, and one close, run once:
 * refuse new calls, wake every waiter (it sees the store closed and returns), drain the store's
 * group commits, stop listening, and close the database when the store opened it.
 */
import type { Clock } from '../../actors/index.js';
import type { Database } from '../../data/index.js';
import { listenForWakeups, Wakeup } from './wakeup.js';

export interface StoreLifecycleOptions {
  /** The store's table prefix; on Postgres its wake-ups go on the channel `<prefix>_wake`. */
  readonly prefix: string;
  readonly clock: Clock;
  /** Close the database on `close()` (set when the store opened it). */
  readonly ownsDatabase: boolean | undefined;
  /** The store's typed error for a call after close. */
  readonly closedError: () => Error;
}

export class StoreLifecycle {
  readonly wakeup: Wakeup;
  /** Where a commit NOTIFYs the other instances (Postgres); undefined on SQLite. */
  readonly notifyChannel: string | undefined;
  readonly #db: Database;
  readonly #options: StoreLifecycleOptions;
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(db: Database, options: StoreLifecycleOptions) {
    this.#db = db;
    this.#options = options;
    this.wakeup = new Wakeup(options.clock);
    this.notifyChannel = db.backend === 'postgres' ? `${options.prefix}_wake` : undefined;
  }

  /** On Postgres, listens for wake-ups (once the tables exist). */
  async listen(): Promise<void> {
    this.#unlisten = await listenForWakeups(this.#db, this.notifyChannel, this.wakeup);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws the store's closed error after close. */
  check(): void {
    if (this.#closed) throw this.#options.closedError();
  }

  /** Closes once; `drain` settles what the store still has queued. */
  close(drain: () => Promise<void>): Promise<void> {
    this.#closing ??= this.#close(drain);
    return this.#closing;
  }

  async #close(drain: () => Promise<void>): Promise<void> {
    this.#closed = true;
    this.wakeup.wakeAll();
    await drain();
    await this.#unlisten?.().catch(() => undefined);
    if (this.#options.ownsDatabase === true) await this.#db.close();
  }
}

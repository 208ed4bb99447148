/**
 * Callers waiting for work in a SQL store: fetches waiting for messages of a stream, workers
 * waiting for tasks of a queue, each under a numeric id. A local write wakes the waiters of its id
 * at commit; on Postgres a NOTIFY (no payload, a wake-up only) wakes every waiter of the other
 * instances, and so does a reconnect of the listener (notifications sent meanwhile are lost). A
 * waiter also looks again after its poll interval, and a lost wake-up never costs more than that.
 */
import type { Clock } from '../../actors/index.js';
import type { Database } from '../../data/index.js';

export class Wakeup {
  readonly #waiters = new Map<number, Set<() => void>>();

  constructor(readonly clock: Clock) {}

  /** Resolves on a wake-up of `id` (or of all), after `ms`, or when `signal` aborts. */
  wait(id: number, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      let set = this.#waiters.get(id);
      if (set === undefined) this.#waiters.set(id, (set = new Set()));
      const waiters = set;
      const done = (): void => {
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(id) === waiters) this.#waiters.delete(id);
        this.clock.clearTimer(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.clock.setTimer(done, ms);
      this.clock.unrefTimer?.(timer);
      signal?.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }

  wake(id: number): void {
    const set = this.#waiters.get(id);
    if (set === undefined) return;
    for (const done of [...set]) done();
  }

  wakeAll(): void {
    for (const set of [...this.#waiters.values()]) for (const done of [...set]) done();
  }

  get waiting(): number {
    let count = 0;
    for (const set of this.#waiters.values()) count += set.size;
    return count;
  }
}

/** A Postgres `Database` that can LISTEN (PostgresDatabase), recognised by its method. */
interface Listening {
  listen(channel: string, handler: () => void, options: { onResync?: () => void }): Promise<() => Promise<void>>;
}

/**
 * On a database that can LISTEN (Postgres): each notification on `channel`, and each reconnect of
 * the listener, wakes every waiter of `wakeup`. Answers how to stop listening; undefined where
 * there is nothing to listen to (SQLite, or no channel).
 */
export async function listenForWakeups(db: Database, channel: string | undefined, wakeup: Wakeup): Promise<(() => Promise<void>) | undefined> {
  const listening = db as Database & Partial<Listening>;
  if (channel === undefined || typeof listening.listen !== 'function') return undefined;
  return listening.listen(channel, () => wakeup.wakeAll(), { onResync: () => wakeup.wakeAll() });
}

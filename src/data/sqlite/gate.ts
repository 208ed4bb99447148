/**
 * The single-writer gate: an async mutex on the main thread in front of the writer thread.
 *
 * A transaction (or a pinned session) holds it exclusively from BEGIN to COMMIT, so no other
 * statement can land inside it. A write outside any transaction does not hold it: when nobody holds
 * or waits for the gate it goes straight to the writer's queue; otherwise it waits its turn in the
 * same FIFO and is dispatched, synchronously and in order, when its turn comes, ahead of the next
 * transaction's BEGIN. Waiters are capped (PoolExhausted) and wait at most acquireTimeoutMs
 * (AcquireTimeout), as the pool's checkouts do.
 */
import { remainingMs, type DataContext } from '../context.js';
import { AcquireTimeout, PoolClosed, PoolExhausted } from '../errors.js';

export type Release = () => void;

interface Waiter {
  readonly exclusive: boolean;
  /** Runs when its turn comes: takes the gate (exclusive) or dispatches the write (pass). */
  readonly grant: () => void;
  readonly fail: (error: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface GateEvents {
  exhausted(): void;
  timedOut(): void;
}

export class WriterGate {
  #held = false;
  #waiters: Waiter[] = [];
  #closed = false;
  #closedError: () => Error = () => new PoolClosed();

  constructor(
    readonly maxWaiters: number,
    readonly acquireTimeoutMs: number,
    readonly events: GateEvents,
  ) {}

  get held(): boolean {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Whether a write may go to the writer now, without waiting. */
  get open(): boolean {
    return !this.#held && this.#waiters.length === 0;
  }

  /** Takes the gate at once if it is free; undefined otherwise (the checkpoint scheduler's way in). */
  tryAcquire(): Release | undefined {
    if (this.#closed || !this.open) return undefined;
    this.#held = true;
    return this.#releaser();
  }

  /** Takes the gate for a transaction or session; resolves with its release. */
  acquire(ctx: DataContext | undefined): Promise<Release> {
    const now = this.tryAcquire();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<Release>((resolve, reject) => {
      this.#wait(ctx, true, () => {
        this.#held = true;
        resolve(this.#releaser());
      }, reject);
    });
  }

  /**
   * Runs `dispatch` (which queues a write on the writer) now when the gate is open, or in its turn;
   * returns what `dispatch` returns.
   */
  pass<T>(ctx: DataContext | undefined, dispatch: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closedError());
    if (this.open) return dispatch();
    return new Promise<T>((resolve, reject) => {
      this.#wait(ctx, false, () => {
        try {
          dispatch().then(resolve, reject);
        } catch (error) {
          reject(error);
        }
      }, reject);
    });
  }

  /** Fails every waiter; later calls fail with PoolClosed (or what `error` makes). */
  close(error?: () => Error): void {
    if (error !== undefined) this.#closedError = error;
    this.#closed = true;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) {
      if (waiter.timer !== undefined) clearTimeout(waiter.timer);
      waiter.fail(this.#closedError());
    }
  }

  #wait(ctx: DataContext | undefined, exclusive: boolean, grant: () => void, fail: (error: unknown) => void): void {
    if (this.#closed) return fail(this.#closedError());
    if (this.#waiters.length >= this.maxWaiters) {
      this.events.exhausted();
      return fail(new PoolExhausted(this.maxWaiters));
    }
    const timeoutMs = Math.min(this.acquireTimeoutMs, remainingMs(ctx));
    const waiter: Waiter = { exclusive, grant, fail, timer: undefined };
    waiter.timer = setTimeout(() => {
      const index = this.#waiters.indexOf(waiter);
      if (index < 0) return;
      this.#waiters.splice(index, 1);
      this.events.timedOut();
      fail(new AcquireTimeout(timeoutMs));
      // A transaction that gave up may have been what held back writes queued behind it.
      if (index === 0 && !this.#held) this.#drain();
    }, timeoutMs);
    this.#waiters.push(waiter);
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held = false;
      this.#drain();
    };
  }

  /** Hands the gate on: writes waiting at the front are dispatched in order, up to the next transaction. */
  #drain(): void {
    while (!this.#held && this.#waiters.length > 0) {
      const waiter = this.#waiters.shift()!;
      if (waiter.timer !== undefined) clearTimeout(waiter.timer);
      waiter.grant();
    }
  }
}

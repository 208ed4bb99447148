/**
 * Group commit: calls issued while a batch is being written wait and go together in the next one,
 * so N concurrent publishes (or acks) cost one transaction, not N. The first call of an idle queue
 * waits one macrotask (`setImmediate`) so that everything issued in the same turn joins it. Each
 * item settles on its own: `run` answers one outcome per item (a failure for one stream does not
 * fail the others); if `run` throws, every item of the batch rejects with that error.
 */
import { StreamCapExceeded } from './errors.js';

export type Outcome<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

interface Waiting<T, R> {
  readonly item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions<T, R> {
  /** Writes one batch; answers one outcome per item, in order. */
  readonly run: (items: readonly T[]) => Promise<readonly Outcome<R>[]>;
  /** Items one batch takes at most. */
  readonly maxBatch: number;
  /** Items waiting at most; one more is a StreamCapExceeded naming `capName`. */
  readonly maxQueued: number;
  readonly capName: string;
}

export class GroupCommit<T, R> {
  readonly #options: GroupCommitOptions<T, R>;
  #queue: Waiting<T, R>[] = [];
  #running: Promise<void> | undefined;
  #scheduled = false;

  constructor(options: GroupCommitOptions<T, R>) {
    this.#options = options;
  }

  get queued(): number {
    return this.#queue.length;
  }

  submit(item: T): Promise<R> {
    if (this.#queue.length >= this.#options.maxQueued) {
      return Promise.reject(new StreamCapExceeded(this.#options.capName, this.#options.maxQueued, this.#queue.length + 1));
    }
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#running === undefined && !this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#next();
        });
      }
    });
  }

  /**
   * Hands up to one batch of the queued items (none of a batch being written) to a caller that
   * writes them in a transaction of its own, then settles them with `settle` after its commit, or `fail`.
   */
  takeQueued(): Taken<T, R> | undefined {
    if (this.#queue.length === 0) return undefined;
    // At most one batch, as the queue's own writes take.
    const batch = this.#queue.length <= this.#options.maxBatch ? this.#queue : this.#queue.slice(0, this.#options.maxBatch);
    this.#queue = batch === this.#queue ? [] : this.#queue.slice(batch.length);
    return {
      items: batch.map((waiting) => waiting.item),
      settle: (outcomes) => settle(batch, outcomes),
      fail: (error) => {
        for (const waiting of batch) waiting.reject(error);
      },
    };
  }

  /** Resolves once nothing is queued or running. */
  async drain(): Promise<void> {
    while (this.#running !== undefined || this.#queue.length > 0) {
      if (this.#running === undefined) this.#next();
      await this.#running;
    }
  }

  #next(): void {
    if (this.#running !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue.length <= this.#options.maxBatch ? this.#queue : this.#queue.slice(0, this.#options.maxBatch);
    this.#queue = batch === this.#queue ? [] : this.#queue.slice(batch.length);
    this.#running = this.#write(batch).finally(() => {
      this.#running = undefined;
      this.#next();
    });
  }

  async #write(batch: readonly Waiting<T, R>[]): Promise<void> {
    let outcomes: readonly Outcome<R>[];
    try {
      outcomes = await this.#options.run(batch.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    settle(batch, outcomes);
  }
}

export interface Taken<T, R> {
  readonly items: readonly T[];
  settle(outcomes: readonly Outcome<R>[]): void;
  fail(error: unknown): void;
}

function settle<T, R>(batch: readonly Waiting<T, R>[], outcomes: readonly Outcome<R>[]): void {
  for (let i = 0; i < batch.length; i++) {
    const outcome = outcomes[i]!;
    if (outcome.ok) batch[i]!.resolve(outcome.value);
    else batch[i]!.reject(outcome.error);
  }
}

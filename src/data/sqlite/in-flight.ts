/**
 * Batches on their way to a worker and back: the requests they carry, and one timer for the
 * earliest deadline among them, so that a statement stuck behind a long one (SQLite cannot
 * interrupt a running statement) fails on time rather than when the worker is free again. One
 * timer per channel, not one per statement nor one per batch: it stays armed (unreferenced) when the
 * last batch comes back, since the next batch's deadline is almost always later, and a sweep that
 * finds nothing due just re-arms for the earliest deadline left. Setting and clearing a native
 * timer for every awaited statement cost more than the sweep.
 */
import { BatchBuilder } from './batch.js';
import { Op, type ReplyFrame } from './protocol.js';

/** Why a request got no reply from the worker. */
export type TransportFailureKind = 'lost' | 'timeout' | 'too_large' | 'closed' | 'stale';

export class TransportFailure {
  constructor(
    readonly kind: TransportFailureKind,
    readonly detail: string,
    readonly cause?: unknown,
  ) {}
}

/** A queued op's owner: it gets the reply (or the failure) for its op. */
export interface Request {
  /** The worker generation it must run on; 0: any. */
  readonly generation: number;
  /**
   * Its op's reply: `value` is the next value of the frame for Answer.Value, `slot` its SQL's slot
   * (statements), `generation` the worker instance that ran it.
   */
  answer(frame: ReplyFrame, index: number, value: unknown, slot: number, generation: number): void;
  reject(failure: TransportFailure): void;
}

export class Batch {
  readonly builder = new BatchBuilder();
  readonly requests: Request[] = [];
  /** Requests already failed on the main thread because their deadline passed while in flight. */
  expired: Uint8Array | undefined;
  /** The earliest deadline of a request still waiting for its answer. */
  earliest = Infinity;
}

export class InFlight {
  readonly #batches = new Set<Batch>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  constructor(readonly label: string) {}

  add(batch: Batch): void {
    const { requests, builder } = batch;
    const deadlines = builder.deadlines;
    for (let i = 0; i < requests.length; i++) {
      if (builder.kinds[i] !== Op.Skip && deadlines[i]! < batch.earliest) batch.earliest = deadlines[i]!;
    }
    this.#batches.add(batch);
    this.#arm(batch.earliest);
  }

  delete(batch: Batch): void {
    this.#batches.delete(batch);
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #arm(at: number): void {
    if (at >= this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(this.#expire, Math.max(0, at - Date.now()) + 1);
    this.#timer.unref();
  }

  /** Fails the requests whose deadline has passed; their answers, when they come, are dropped. */
  readonly #expire = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const batch of this.#batches) {
      if (batch.earliest > now) {
        if (batch.earliest < next) next = batch.earliest;
        continue;
      }
      const { requests, builder } = batch;
      const deadlines = builder.deadlines;
      let earliest = Infinity;
      for (let i = 0; i < requests.length; i++) {
        if (builder.kinds[i] === Op.Skip || batch.expired?.[i] === 1) continue;
        const deadline = deadlines[i]!;
        if (deadline <= now) {
          (batch.expired ??= new Uint8Array(requests.length))[i] = 1;
          requests[i]!.reject(new TransportFailure('timeout', `${this.label}: the statement did not finish by its deadline (it may still run to completion there)`));
        } else if (deadline < earliest) earliest = deadline;
      }
      batch.earliest = earliest;
      if (earliest < next) next = earliest;
    }
    if (next !== Infinity) this.#arm(next);
  };
}

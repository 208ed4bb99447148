/**
 * The connection's two queues: ops written and waiting for their ReadyForQuery (in the server's
 * answer order, so every message belongs to the head), and ops accepted but held back. An op is
 * held back while the pipeline is full (maxInFlight), while a cursor or COPY owns the socket
 * (anything written meanwhile would land inside it), and while a CancelRequest is on its way:
 * until both the target's answer is in and the server has taken the cancel (it signals the backend
 * before closing the cancel socket), so a cancel cannot hit a statement written after it. Owned by
 * the actor; touched only in its handlers.
 */
import { Fifo } from './fifo.js';
import { OpKind, type Op } from './ops.js';

export class Pipeline {
  readonly sent = new Fifo<Op>();
  readonly waiting = new Fifo<Op>();
  /** The cursor or COPY holding the socket. */
  exclusive: Op | null = null;
  /** The op a CancelRequest was sent for, until its ReadyForQuery. */
  cancelTarget: Op | null = null;
  /** A CancelRequest not yet acknowledged (its socket not yet closed by the server). */
  cancelling = false;
  /** When the head became the head (Date.now()). */
  headSince = 0;

  constructor(
    readonly maxInFlight: number,
    readonly maxQueued: number,
  ) {}

  get head(): Op | undefined {
    return this.sent.peek();
  }

  /** Whether the next op may be written now rather than queued. */
  get writable(): boolean {
    return this.exclusive === null && this.cancelTarget === null && !this.cancelling && this.sent.length < this.maxInFlight;
  }

  /** Queues an op; false when the queue is at maxQueued. */
  hold(op: Op): boolean {
    if (this.waiting.length >= this.maxQueued) return false;
    this.waiting.push(op);
    return true;
  }

  /** The next queued op that may be written now, if any (answered ones are skipped: they timed out waiting). */
  next(): Op | undefined {
    while (this.waiting.length > 0 && this.writable) {
      const op = this.waiting.shift()!;
      if (!op.answered || op.kind === OpKind.Close) return op;
    }
    return undefined;
  }

  /** An op was written. */
  written(op: Op, now: number): void {
    if (this.sent.length === 0) this.headSince = now;
    this.sent.push(op);
    if (op.kind === OpKind.Cursor || op.kind === OpKind.CopyIn || op.kind === OpKind.CopyOut) this.exclusive = op;
  }

  /** The head's ReadyForQuery arrived: it leaves the pipeline. */
  done(now: number): Op | undefined {
    const op = this.sent.shift();
    if (op === undefined) return undefined;
    if (op === this.exclusive) this.exclusive = null;
    if (op === this.cancelTarget) this.cancelTarget = null;
    if (this.sent.length > 0) this.headSince = now;
    return op;
  }
}

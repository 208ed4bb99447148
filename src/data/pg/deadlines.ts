/**
 * Statement deadlines, aborts and cancel requests. One actor timer is armed for the earliest
 * deadline; when it fires, every statement past its deadline is answered with StatementTimeout at
 * once. The one running (the head) is cancelled with a CancelRequest on a separate socket; one
 * written behind others is cancelled only if it still runs a short grace period after reaching
 * the head, since most are quick and a late cancel would hit the statement after it.
 */
import type { TimerEntry } from '../../actors/index.js';
import { DbError, StatementTimeout } from '../errors.js';
import type { Logger } from '../../telemetry/index.js';
import { sendCancelRequest, type BackendKey } from './cancel.js';
import type { CopySession } from './copy.js';
import type { CursorSession } from './cursor.js';
import { Cancel, OpKind, type Op, type SessionHost } from './ops.js';
import type { Pipeline } from './pipeline.js';

/** An op that timed out while queued is cancelled only if it still runs this long after reaching the head. */
export const CANCEL_GRACE_MS = 50;

export interface DeadlineHost extends SessionHost {
  readonly pipeline: Pipeline;
  readonly log: Logger;
  readonly backendKey: BackendKey | null;
  /** Sends the actor its TICK after `delayMs`. */
  schedule(delayMs: number): TimerEntry;
  /** Tells the actor (by a message) that the server took the CancelRequest. */
  cancelSettled(): void;
  unschedule(timer: TimerEntry): void;
}

export class Deadlines {
  #timer: TimerEntry | null = null;
  #timerAt = Infinity;

  constructor(private readonly host: DeadlineHost) {}

  /** Makes sure the timer fires by `deadline`. */
  arm(deadline: number): void {
    if (deadline >= this.#timerAt) return;
    if (this.#timer !== null) this.host.unschedule(this.#timer);
    this.#timerAt = deadline;
    this.#timer = this.host.schedule(Math.max(0, deadline - Date.now()));
  }

  /** The timer fired: statements past their deadline fail now; the timer is re-armed for the next. */
  tick(now: number): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    const { sent, waiting } = this.host.pipeline;
    let next = Infinity;
    const head = sent.peek();
    if (head !== undefined && head.cancel !== Cancel.None && !head.cancelSent) {
      if (now - this.host.pipeline.headSince >= CANCEL_GRACE_MS) void this.cancelHead();
      else next = this.host.pipeline.headSince + CANCEL_GRACE_MS;
    }
    for (let i = 0; i < sent.length; i++) {
      const op = sent.at(i)!;
      // A cursor or COPY has nobody waiting between its calls, and its deadline still counts.
      if (op.cancel !== Cancel.None || (op.answered && op.session === null)) continue;
      if (op.deadline <= now) this.expire(op, Cancel.Timeout, undefined, i === 0);
      else if (op.deadline < next) next = op.deadline;
    }
    for (let i = 0; i < waiting.length; i++) {
      const op = waiting.at(i)!;
      if (op.answered) continue;
      if (op.deadline <= now) this.expire(op, Cancel.Timeout, undefined, false);
      else if (op.deadline < next) next = op.deadline;
    }
    if (next !== Infinity) this.arm(next);
  }

  /** A new head: if it expired while queued, it gets the grace period, then a cancel. */
  headChanged(head: Op | undefined): void {
    if (head !== undefined && head.cancel !== Cancel.None && !head.cancelSent) this.arm(this.host.pipeline.headSince + CANCEL_GRACE_MS);
  }

  /** The caller's signal aborted: the op opened by `request` is answered now and cancelled if running. */
  abort(request: object, reason: unknown): void {
    const { sent, waiting } = this.host.pipeline;
    for (let i = 0; i < sent.length; i++) {
      const op = sent.at(i)!;
      if (op.request === request) return this.expire(op, Cancel.Abort, reason, i === 0);
    }
    for (let i = 0; i < waiting.length; i++) {
      const op = waiting.at(i)!;
      if (op.request === request) return this.expire(op, Cancel.Abort, reason, false);
    }
  }

  /** The op's time is up, or its caller aborted: answer now; cancel it if it is running. */
  expire(op: Op, why: Cancel, reason: unknown, running: boolean): void {
    if (op.cancel !== Cancel.None) return;
    op.cancel = why;
    const connection = this.host.config.redacted;
    const error =
      why === Cancel.Timeout
        ? new StatementTimeout(op.timeoutMs, { connection, params: op.reportedParams })
        : new DbError('statement cancelled: the context was aborted', { sqlstate: '57014', connection, cause: reason, params: op.reportedParams });
    // Nobody waiting on it: a cursor between batches, a COPY FROM between writes.
    const idle = op.answered;
    if (op.error === null) op.error = error;
    op.answer(error);
    if (op.kind === OpKind.Cursor) (op.session as CursorSession).expired(this.host, op, idle);
    else if (op.kind === OpKind.CopyIn || op.kind === OpKind.CopyOut) (op.session as CopySession).expired(this.host, op, error, idle);
    if (running) void this.cancelHead();
  }

  /**
   * Sends a CancelRequest for the head. Cancel is racy by design (it cancels whatever the backend
   * runs when it arrives), so nothing new is written until the head's answer is in, and the ops
   * already written behind it are marked: one hit by a late cancel fails as retryable (it was
   * rolled back) rather than with an unexplained error.
   */
  cancelHead(): Promise<void> {
    const pipeline = this.host.pipeline;
    const head = pipeline.head;
    const key = this.host.backendKey;
    if (head === undefined || head.cancelSent || key === null) return Promise.resolve();
    head.cancelSent = true;
    pipeline.cancelTarget = head;
    pipeline.cancelling = true;
    for (let i = 1; i < pipeline.sent.length; i++) pipeline.sent.at(i)!.exposed = true;
    return sendCancelRequest(this.host.config, key)
      .catch((error: unknown) => this.host.log.warn({ err: error, event: 'pg.cancel_failed' }, 'cancel request failed'))
      .finally(() => this.host.cancelSettled());
  }
}

import type { ExitReason } from './exit.js';
import type { MonitorRef, Ref } from './ref.js';
import type { TimerEntry } from './timers.js';

/** What a trapping actor receives when a linked actor exits or someone calls `exit` on it. */
export class ExitMessage {
  readonly type = 'EXIT' as const;
  constructor(
    readonly from: Ref,
    readonly reason: ExitReason,
  ) {}
}

/** What a monitoring actor receives when the monitored actor exits (`noproc` if it was already gone). */
export class DownMessage {
  readonly type = 'DOWN' as const;
  constructor(
    readonly monitor: MonitorRef,
    readonly ref: Ref,
    readonly reason: ExitReason,
  ) {}
}

/** Returned by a selective receive whose timeout elapsed before a matching message arrived. */
export const RECEIVE_TIMEOUT: unique symbol = Symbol('molo.receive-timeout');
export type ReceiveTimeout = typeof RECEIVE_TIMEOUT;

/**
 * A request awaiting its reply. It is itself the message the callee receives, and the `from`
 * handle a server may keep to reply later from another handler.
 */
export class CallRequest<Request = unknown, Reply = unknown> {
  readonly type = '$call' as const;
  /** @internal intrusive list of the callee's open calls, so its exit fails them all in O(n). */
  _prev: CallRequest | null = null;
  /** @internal */
  _next: CallRequest | null = null;
  /** @internal */
  _timer: TimerEntry | null = null;
  /** @internal */
  _timeoutMs = 0;
  /** @internal */
  _settle: ((call: CallRequest, ok: boolean, value: unknown) => void) | null = null;
  /** @internal */
  _resolve!: (value: Reply) => void;
  /** @internal */
  _reject!: (error: unknown) => void;

  constructor(
    readonly request: Request,
    readonly callee: Ref,
  ) {}

  /** Sends the reply; later replies (or replies after a timeout) are ignored, as OTP drops them. */
  reply(value: Reply): void {
    this._settle?.(this as CallRequest, true, value);
  }

  /** True while the caller is still waiting. */
  get open(): boolean {
    return this._settle !== null;
  }
}

/** Every message the kernel itself may put in a mailbox. */
export type SystemMessage = ExitMessage | DownMessage | CallRequest;

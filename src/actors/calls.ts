import type { ActorCell } from './actor-cell.js';
import { CellFlag } from './cell-flags.js';
import { CalleeExited, CallingSelf, CallTimeout, NoProc } from './errors.js';
import type { ExitReason } from './exit.js';
import { CallRequest } from './messages.js';
import type { ObservedSpan } from './observer.js';
import type { Ref } from './ref.js';
import { checkTimeout } from './system-options.js';
import type { TimerService } from './timers.js';
import type { Router } from './placement/router.js';

/** Where calls with no local callee go: names held elsewhere on the node, and routes by (node, creation). */
export interface CallRoutes {
  readonly router: Router | undefined;
  routeOf(ref: Ref): Router | undefined;
}

/**
 * Calls in flight, from opening to settling. A call is its CallRequest: listed on its callee's
 * intrusive list (so the callee's exit fails them all in O(n)) and timed on the shared
 * TimerService. It settles once, by whichever comes first: the reply, the timeout, the callee's
 * exit, a refused delivery, or the router (a placed callee's reply, or its host's death).
 */
export class Calls {
  constructor(
    readonly timers: TimerService,
    /** A call's timeout when its caller gives none. */
    readonly defaultTimeoutMs: number,
  ) {}

  /** A call to a local actor: listed on it, timed, then delivered; a refused delivery fails it at once. */
  open(cell: ActorCell, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const call = this.#request(cell, request, timeoutMs);
    if (call === undefined) return Promise.reject(new CallingSelf(cell.self));
    const promise = new Promise<unknown>((resolve, reject) => {
      call._resolve = resolve;
      call._reject = reject;
    });
    this.#deliver(cell, call);
    return promise;
  }

  /**
   * A call to a local actor that settles through `resolve` or `reject` instead of a promise: for
   * calls served on behalf of another system, whose answer is a frame, not a continuation.
   */
  openWith(cell: ActorCell, request: unknown, timeoutMs: number | undefined, resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
    const call = this.#request(cell, request, timeoutMs);
    if (call === undefined) {
      reject(new CallingSelf(cell.self));
      return;
    }
    call._resolve = resolve;
    call._reject = reject;
    this.#deliver(cell, call);
  }

  /**
   * The request of a call to `cell`, with its timeout (throws, synchronously, on an invalid one);
   * undefined when `cell` is the caller.
   */
  #request(cell: ActorCell, request: unknown, timeoutMs: number | undefined): CallRequest | undefined {
    // Its own callback is on the stack: a call to itself (OTP's calling_self) could only time out.
    if (cell.flags & CellFlag.RUNNING) return undefined;
    const timeout = callTimeout(timeoutMs, this.defaultTimeoutMs);
    const call = new CallRequest(request, cell.self);
    call._timeoutMs = timeout;
    return call;
  }

  /** Lists, times and delivers an opened call; a refused delivery fails it at once. */
  #deliver(cell: ActorCell, call: CallRequest): void {
    call._settle = this.settle;
    const head = cell.calls;
    if (head !== null) {
      head._prev = call;
      call._next = head;
    }
    cell.calls = call;
    const timeout = call._timeoutMs;
    // Infinity (OTP's infinity): no timer; the callee's exit still fails the call.
    call._timer = timeout === Infinity ? null : this.timers.schedule(timeout, expireCall, call);
    try {
      cell.deliver(call);
    } catch (error) {
      this.settle(call, false, error);
    }
  }

  /**
   * A call with no local callee: a ref routed elsewhere (another creation or node), or a name held
   * in a placement host. The caller-side timer is armed here, the router delivers; anything else
   * fails with NoProc.
   */
  openElsewhere(routes: CallRoutes, target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const callee = typeof target === 'string' ? routes.router?.whereis(target) : target;
    const router = callee === undefined ? undefined : routes.routeOf(callee);
    if (callee === undefined || router === undefined) return Promise.reject(new NoProc(target));
    const timeout = callTimeout(timeoutMs, this.defaultTimeoutMs);
    const call = new CallRequest(request, callee);
    const promise = new Promise<unknown>((resolve, reject) => {
      call._resolve = resolve;
      call._reject = reject;
    });
    call._settle = this.settle;
    call._timeoutMs = timeout;
    // Infinity (OTP's infinity): no timer; the callee's exit still fails the call.
    call._timer = timeout === Infinity ? null : this.timers.schedule(timeout, expireCall, call);
    try {
      router.call(call);
    } catch (error) {
      // The router may have wrapped `_settle` to forget the call too.
      call._settle?.(call, false, error);
    }
    return promise;
  }

  /** Every call's `_settle` until it settles: unlists it, cancels its timer, settles its promise. */
  readonly settle = (call: CallRequest, ok: boolean, value: unknown): void => {
    if (call._settle === null) return;
    call._settle = null;
    const prev = call._prev;
    const next = call._next;
    if (prev !== null) prev._next = next;
    else {
      const cell = call.callee._cell as ActorCell | undefined;
      if (cell !== undefined && cell.calls === call) cell.calls = next;
    }
    if (next !== null) next._prev = prev;
    call._prev = call._next = null;
    if (call._timer !== null) {
      this.timers.cancel(call._timer);
      call._timer = null;
    }
    if (ok) call._resolve(value);
    else call._reject(value);
  };

  /** The callee exited: every call still waiting on it fails with CalleeExited. */
  failAll(cell: ActorCell, reason: ExitReason): void {
    for (let call = cell.calls; call !== null; ) {
      const next: CallRequest | null = call._next;
      call._prev = call._next = null;
      this.settle(call, false, new CalleeExited(cell.self, reason));
      call = next;
    }
    cell.calls = null;
  }
}

/** A call's promise, ending `span` when it settles (with the error when it fails). */
export function endSpanWith(span: ObservedSpan, promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (reply) => {
      span.end();
      return reply;
    },
    (error: unknown) => {
      span.end(error);
      throw error;
    },
  );
}

/** The caller's timeout, checked, or the default; Infinity is allowed and arms no timer. */
function callTimeout(timeoutMs: number | undefined, defaultTimeoutMs: number): number {
  if (timeoutMs === undefined) return defaultTimeoutMs;
  return timeoutMs === Infinity ? Infinity : checkTimeout('call timeout', timeoutMs);
}

function expireCall(call: CallRequest): void {
  call._timer = null;
  call._settle?.(call, false, new CallTimeout(call.callee, call._timeoutMs));
}

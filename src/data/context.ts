/**
 * The context every public data call takes. It carries the caller's deadline (so a statement never
 * outlives the request that wanted it), a correlation id (so a slow query in the log names the
 * request), and a database selector (so one process can serve several tenants without a hidden
 * "current connection"). It is a plain argument, not ambient state: async code that hops through
 * actors and worker threads keeps it without AsyncLocalStorage, and a test can see what was passed.
 */

/** Statement timeout when the context sets neither deadline nor timeout. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** Hard ceiling: no statement runs longer, whatever the context asks. */
export const MAX_STATEMENT_TIMEOUT_MS = 300_000;

export interface DataContext {
  /** Absolute deadline in ms since the epoch (`Date.now()` scale). */
  readonly deadline?: number;
  /** Relative timeout for this call; the sooner of it and `deadline` wins. */
  readonly timeoutMs?: number;
  /** Carried into logs, spans and errors. */
  readonly correlationId?: string;
  /** Which database or tenant the call is for; a router picks a pool by it. */
  readonly database?: string;
  /** Aborting cancels the statement (a cancel request on Postgres). */
  readonly signal?: AbortSignal;
  /** Include bound parameters in errors and logs. Off by default: parameters may hold secrets. */
  readonly debug?: boolean;
}

/** The context of a call that states nothing: default timeout, no correlation id. */
export const BACKGROUND: DataContext = Object.freeze({});

/** Milliseconds this call may still run: the context's deadline or timeout, default 30 s, at most 300 s. */
export function remainingMs(ctx: DataContext | undefined, now: number = Date.now()): number {
  let ms = DEFAULT_STATEMENT_TIMEOUT_MS;
  if (ctx !== undefined) {
    if (ctx.timeoutMs !== undefined) ms = ctx.timeoutMs;
    if (ctx.deadline !== undefined) {
      const left = ctx.deadline - now;
      ms = ctx.timeoutMs !== undefined ? Math.min(ms, left) : left;
    }
  }
  return Math.max(0, Math.min(ms, MAX_STATEMENT_TIMEOUT_MS));
}

/** A child context with a deadline no later than `ms` from now. */
export function withTimeout(ctx: DataContext | undefined, ms: number): DataContext {
  const deadline = Date.now() + ms;
  return { ...ctx, deadline: ctx?.deadline !== undefined ? Math.min(ctx.deadline, deadline) : deadline };
}

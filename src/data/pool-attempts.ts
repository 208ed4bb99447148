/**
 * A pool's connect attempts: the last failure, the attempts that failed in a row, the capped
 * exponential backoff before the next one, and what the failure means to a caller. One warning
 * per outage (and per new reason): a server down for an hour must not log an error per reconnect.
 * The repeats go to debug; the failures counter and the pool's health still count every one.
 */
import type { Clock, ClockTimer } from '../actors/clock.js';
import type { Logger } from '../telemetry/index.js';
import { ConnectFailed, DbError } from './errors.js';
import type { DataMetrics } from './metrics.js';

export class ConnectAttempts {
  /** The last attempt's error while it stands (cleared by a connection or a retry that found the pool full). */
  lastError: unknown = undefined;
  #failedInRow = 0;
  #warnedReason: string | undefined = undefined;
  #delay: number;
  #timer: ClockTimer | undefined;

  constructor(
    private readonly pool: string,
    private readonly clock: Clock,
    private readonly backoff: { readonly initialMs: number; readonly maxMs: number },
    private readonly logger: Logger | undefined,
    private readonly metrics: DataMetrics | undefined,
  ) {
    this.#delay = backoff.initialMs;
  }

  /** A retry is scheduled: no attempt is made before it fires. */
  get waiting(): boolean {
    return this.#timer !== undefined;
  }

  /** The last attempt failed in a way no retry fixes. */
  get permanent(): boolean {
    return isPermanent(this.lastError);
  }

  /** A connection was made: the outage (if any) is over. */
  succeeded(): void {
    if (this.#failedInRow > 0) {
      this.logger?.info({ event: 'pool.connected', pool: this.pool, failedAttempts: this.#failedInRow }, 'pool connected after failed attempts');
    }
    this.#failedInRow = 0;
    this.#warnedReason = undefined;
    this.lastError = undefined;
    this.#delay = this.backoff.initialMs;
  }

  /** An attempt failed: remembered, counted, and logged once per outage and reason. */
  failed(error: unknown): void {
    this.lastError = error;
    this.metrics?.poolConnectFailures.inc({ pool: this.pool });
    this.#failedInRow++;
    const reason = describe(error);
    const fields = { event: 'pool.connect_failed', pool: this.pool, err: reason, attempt: this.#failedInRow, retryInMs: this.#delay };
    if (reason !== this.#warnedReason) {
      this.#warnedReason = reason;
      this.logger?.warn(fields, `pool could not connect; retrying in ${this.#delay} ms with backoff (up to pool.reconnectMaxMs)`);
    } else {
      this.logger?.debug(fields, 'pool could not connect again');
    }
  }

  /** Schedules `retry` after the current backoff (unless one is scheduled), then doubles it up to the cap. */
  schedule(retry: () => void): void {
    if (this.#timer !== undefined) return;
    this.#timer = this.clock.setTimer(() => {
      this.#timer = undefined;
      retry();
    }, this.#delay);
    this.clock.unrefTimer?.(this.#timer);
    this.#delay = Math.min(this.#delay * 2, this.backoff.maxMs);
  }

  /** No retry pending, and the next waits the initial backoff (the pool was started again, or closed). */
  reset(): void {
    this.cancel();
    this.#delay = this.backoff.initialMs;
  }

  cancel(): void {
    if (this.#timer !== undefined) this.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The last failure, as the error a caller who waited `timeoutMs` gets when no connection is open
   * (its code says why, its message says how long we tried).
   */
  unreachable(timeoutMs: number): DbError | undefined {
    const last = this.lastError;
    if (last === undefined) return undefined;
    const why = describe(last).replace(/^connect failed: /, '');
    const fields = last instanceof DbError ? { connection: last.connection, sqlstate: last.sqlstate } : {};
    return new ConnectFailed(`pool ${this.pool} has no connection after ${timeoutMs} ms (pool.acquireTimeoutMs); last attempt: ${why}`, { ...fields, cause: last });
  }

  /** A `ready()` without a timeout of its own, after a failed attempt: that attempt's error, as its cause. */
  attemptFailed(error: unknown): ConnectFailed {
    const why = describe(error).replace(/^connect failed: /, '');
    const fields = error instanceof DbError ? { connection: error.connection, sqlstate: error.sqlstate } : {};
    // No word of the retries in the message: a caller that gives up here (a CLI) closes the pool next.
    return new ConnectFailed(`pool ${this.pool} could not connect: ${why}`, { ...fields, cause: error });
  }
}

/** A connect failure no retry can fix soon (credentials, unknown database, configuration): decided by code. */
export function isPermanent(error: unknown): error is DbError {
  return error instanceof DbError && !error.retryable;
}

export function describe(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/**
 * What a SQLite handle reports: SQLITE_BUSY that outlasted the retries, checkpoint results, waits
 * for the writer that failed, and thread restarts. Counters go to the data metrics when a registry
 * was given (nothing is counted per statement); the same events are logged, and tallied here for
 * `stats()`.
 */
import type { Logger } from '../../telemetry/index.js';
import type { DataMetrics } from '../metrics.js';

export type CheckpointResult = 'ok' | 'busy' | 'failed';

export interface SqliteStats {
  readonly busy: number;
  readonly checkpoints: Readonly<Record<CheckpointResult, number>>;
  readonly restarts: number;
  readonly poolExhausted: number;
  readonly acquireTimeouts: number;
}

export class SqliteTelemetry {
  #busy = 0;
  readonly #checkpoints: Record<CheckpointResult, number> = { ok: 0, busy: 0, failed: 0 };
  #restarts = 0;
  #exhausted = 0;
  #timeouts = 0;

  constructor(
    readonly name: string,
    readonly file: string,
    readonly metrics: DataMetrics | undefined,
    readonly logger: Logger,
  ) {}

  stats(): SqliteStats {
    return { busy: this.#busy, checkpoints: { ...this.#checkpoints }, restarts: this.#restarts, poolExhausted: this.#exhausted, acquireTimeouts: this.#timeouts };
  }

  busy(role: string, attempts: number, message: string): void {
    this.#busy++;
    this.metrics?.sqliteBusy.inc({ file: this.file });
    this.logger.warn({ event: 'sqlite.busy', db: this.name, file: this.file, role, attempts, message }, 'sqlite.busy');
  }

  checkpoint(result: CheckpointResult, fields: Readonly<Record<string, unknown>> = {}): void {
    this.#checkpoints[result]++;
    this.metrics?.sqliteCheckpoints.inc({ file: this.file, result });
    if (result !== 'ok') this.logger.warn({ event: 'sqlite.checkpoint', db: this.name, file: this.file, result, ...fields }, 'sqlite.checkpoint');
    else if (this.logger.isLevelEnabled('debug')) this.logger.debug({ event: 'sqlite.checkpoint', db: this.name, result, ...fields }, 'sqlite.checkpoint');
  }

  exhausted(): void {
    this.#exhausted++;
    this.metrics?.poolExhausted.inc({ pool: this.name });
  }

  acquireTimedOut(): void {
    this.#timeouts++;
    this.metrics?.poolAcquireTimeouts.inc({ pool: this.name });
  }

  /** A worker thread started again after its actor (or the whole thread) died. */
  restarted(role: string, generation: number): void {
    this.#restarts++;
    this.logger.warn({ event: 'sqlite.thread_restarted', db: this.name, file: this.file, role, generation }, 'sqlite.thread_restarted');
  }

  exited(role: string, reason: unknown): void {
    this.logger.warn({ event: 'sqlite.thread_exited', db: this.name, file: this.file, role, reason: describe(reason) }, 'sqlite.thread_exited');
  }

  gaveUp(reason: unknown): void {
    this.logger.error({ event: 'sqlite.supervisor_gave_up', db: this.name, file: this.file, reason: describe(reason) }, 'sqlite.supervisor_gave_up');
  }
}

function describe(reason: unknown): unknown {
  if (reason instanceof Error) return `${reason.name}: ${reason.message}`;
  return reason;
}

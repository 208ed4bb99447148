/**
 * StreamRetention: the supervised actor that enforces retention. Each tick is one bounded pass
 * (`store.enforceRetention`: at most `retentionBatch` rows per rule and stream, in short
 * transactions); a pass that evicted anything is followed by another at once, so a backlog drains
 * in bounded steps, and an idle store is looked at every `intervalMs`. A failed pass is logged and
 * retried at the next tick; `maxFailures` in a row crash the actor, for its supervisor to report.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { GenServer, worker, type ChildSpec } from '../../behaviours/index.js';
import { checkInteger, STREAM_STORE_DEFAULTS } from './limits.js';
import type { StreamStore } from './store.js';

export interface StreamRetentionOptions {
  readonly store: StreamStore;
  /** Between passes while nothing is evicted (default 1,000 ms; 10..3,600,000). */
  readonly intervalMs?: number;
  /** Failed passes in a row before the actor crashes (default 10). */
  readonly maxFailures?: number;
}

export interface StreamRetentionStatus {
  readonly passes: number;
  readonly evicted: number;
  readonly failures: number;
}

const TICK = 'retention.tick';

export class StreamRetentionServer extends GenServer<'status', StreamRetentionStatus, never, typeof TICK> {
  readonly #store: StreamStore;
  readonly #intervalMs: number;
  readonly #maxFailures: number;
  #passes = 0;
  #evicted = 0;
  #failures = 0;

  constructor(options: StreamRetentionOptions) {
    super();
    this.#store = options.store;
    this.#intervalMs = checkInteger('intervalMs', options.intervalMs, STREAM_STORE_DEFAULTS.retentionIntervalMs, 10, 3_600_000);
    this.#maxFailures = checkInteger('maxFailures', options.maxFailures, 10, 1, 1_000);
  }

  override init(): void {
    this.ctx.sendAfter(0, TICK);
  }

  override handleCall(): StreamRetentionStatus {
    return { passes: this.#passes, evicted: this.#evicted, failures: this.#failures };
  }

  override async handleInfo(message: typeof TICK): Promise<void> {
    if (message !== TICK) return;
    let evicted = 0;
    try {
      evicted = await this.#store.enforceRetention();
      this.#passes++;
      this.#evicted += evicted;
      this.#failures = 0;
    } catch (error) {
      this.#failures++;
      this.ctx.log.warn({ event: 'stream.retention_failed', failures: this.#failures, err: error }, 'stream retention pass failed');
      if (this.#failures >= this.#maxFailures) throw error;
    }
    this.ctx.sendAfter(evicted > 0 ? 0 : this.#intervalMs, TICK);
  }
}

export const StreamRetention = {
  start(system: ActorRuntime, options: StreamRetentionOptions, start: { readonly name?: string } = {}): Promise<Ref> {
    return GenServer.start(system, () => new StreamRetentionServer(options), start);
  },
  /** A supervisor child spec running the retention actor (permanent by default). */
  child(id: string, options: StreamRetentionOptions, spec: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec {
    return worker(id, () => new StreamRetentionServer(options), spec);
  },
  status(system: ActorRuntime, ref: Ref, timeoutMs?: number): Promise<StreamRetentionStatus> {
    return GenServer.call<StreamRetentionServer>(system, ref, 'status', timeoutMs);
  },
};

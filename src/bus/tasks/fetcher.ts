/**
 * The pool's fetcher: one per pool. It leases as many tasks as it has idle workers (within the
 * batch, the shared concurrency limit and the rate limit), hands each to an idle TaskWorker,
 * marks them running in one statement, settles finished runs in batches, renews leases every
 * heartbeat (aborting handlers whose lease was lost: cancelled, expired), returns expired leases
 * of its queue, and refreshes the queue's gauges. Its loop runs beside its mailbox.
 *
 * Shutdown (R7-9) is its `terminate`: stop leasing, let running tasks finish until the drain
 * deadline, then abort the rest and settle them `released` (back to the queue, reason shutdown,
 * not an attempt; or the DLQ on a queue configured so). Workers stop after it (they come first in
 * the pool supervisor's children), so they are there to finish while it drains.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DownMessage, MonitorRef, Ref } from '../../actors/index.js';
import { GenServer, Supervisor } from '../../behaviours/index.js';
import { RuntimeTracer, type TelemetrySpan } from '../../telemetry/index.js';
import type { LeasedTask, TaskOutcome, TaskSettlement } from './api.js';
import { PermanentTaskFailure, TaskHardTimeout } from './errors.js';
import type { TaskTelemetry } from './metrics.js';
import type { TaskPoolHandle } from './pool-handle.js';
import { describeFailure } from './transitions.js';
import type { TaskWorkerCast, TaskWorkerReport, TaskWorkerServer } from './worker.js';

export const TaskSpanName = { run: 'molo.task.run' } as const;

/** The behaviour name the admin tree knows pools by (see `TaskWorkers.status`). */
export const TASK_POOL_BEHAVIOUR = 'TaskFetcherServer';

interface InFlight {
  readonly task: LeasedTask;
  readonly worker: string;
  readonly span: TelemetrySpan | undefined;
}

interface WorkerEntry {
  readonly ref: Ref;
  readonly monitor: MonitorRef;
  busy: string | undefined;
}

const INFO_INTERVAL_MS = 5_000;
const MAX_STORE_FAILURES = 10;
const FINAL_FLUSH_MS = 10_000;

export class TaskFetcherServer extends GenServer<'status', ReturnType<TaskPoolHandle['stats']>, never, TaskWorkerReport | DownMessage | { readonly crash: unknown }> {
  readonly #workers = new Map<string, WorkerEntry>();
  readonly #inFlight = new Map<string, InFlight>();
  #settlements: TaskSettlement[] = [];
  #flushing: Promise<void> | undefined;
  readonly #stopping = new AbortController();
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #maintainedAt = Number.NEGATIVE_INFINITY;
  #infoAt = Number.NEGATIVE_INFINITY;
  readonly #tracer = new RuntimeTracer();

  constructor(private readonly pool: TaskPoolHandle) {
    super();
  }

  get #telemetry(): TaskTelemetry | undefined {
    return (this.pool.queue as { telemetry?: TaskTelemetry }).telemetry;
  }

  override async init(): Promise<void> {
    const { queue, options } = this.pool;
    this.pool.fetcher = this.self;
    this.pool.listener = (report) => this.#onReport(report);
    if (this.pool.workers !== undefined) {
      for (const child of await Supervisor.whichChildren(this.ctx.system, this.pool.workers)) {
        if (typeof child.ref === 'object') await this.#join(child.ref, true);
      }
    }
    const configured = (queue as { config?: (name: string) => Promise<{ heartbeatMs: number }> }).config;
    const heartbeatMs = options.heartbeatMs ?? (configured === undefined ? 15_000 : (await configured.call(queue, options.queue)).heartbeatMs);
    this.#heartbeat = setInterval(() => void this.#renew(), heartbeatMs);
    this.#loop = this.#run().catch((error: unknown) => {
      if (!this.#stopping.signal.aborted) this.ctx.send(this.self, { crash: error });
    });
  }

  override handleCall(): ReturnType<TaskPoolHandle['stats']> {
    return this.pool.stats();
  }

  override async handleInfo(message: TaskWorkerReport | DownMessage | { readonly crash: unknown }): Promise<void> {
    if ('crash' in message) throw message.crash;
    if ('type' in message && message.type === 'DOWN') return this.#down(message);
    if ('kind' in message && message.kind === 'task-worker-join') await this.#join(message.worker, false);
  }

  async #join(ref: Ref, askBusy: boolean): Promise<void> {
    const key = ref.toString();
    if (this.#workers.has(key)) return;
    // A worker already running a task of an earlier fetcher is busy until it reports.
    const busy = askBusy ? await GenServer.call<TaskWorkerServer>(this.ctx.system, ref, 'busy').catch(() => true) : false;
    this.#workers.set(key, { ref, monitor: this.ctx.monitor(ref), busy: busy ? '?' : undefined });
    this.pool.workerCount = this.#workers.size;
    this.#wake?.();
  }

  #down(message: DownMessage): void {
    const key = message.ref.toString();
    const entry = this.#workers.get(key);
    if (entry === undefined) return;
    this.#workers.delete(key);
    this.pool.workerCount = this.#workers.size;
    const flight = entry.busy === undefined ? undefined : this.#inFlight.get(entry.busy);
    if (flight !== undefined && flight.worker === key) {
      this.#finish(flight, { kind: 'failed', reason: 'error', detail: `worker exited: ${describeFailure(message.reason)}` });
    }
  }

  #onReport(report: TaskWorkerReport): void {
    if (report.kind !== 'task-done') return;
    const entry = this.#workers.get(report.worker.toString());
    if (entry !== undefined) entry.busy = undefined;
    const flight = this.#inFlight.get(report.id);
    if (flight !== undefined && flight.task.leaseToken === report.leaseToken) this.#finish(flight, outcomeOf(report, flight.task));
    this.#wake?.();
  }

  /** A run ended (or was given up on): settle it, free its slot. */
  #finish(flight: InFlight, outcome: TaskOutcome): void {
    const id = flight.task.envelope.id;
    this.#inFlight.delete(id);
    this.pool.options.global?.release();
    this.pool.counts.running = this.#inFlight.size;
    this.#telemetry?.inFlight.set(this.pool.options.queue, this.#inFlight.size);
    if (outcome.kind === 'succeeded') this.pool.counts.succeeded++;
    else if (outcome.kind === 'failed') this.pool.counts.failed++;
    flight.span?.end(outcome.kind === 'failed' ? new Error(`${outcome.reason}: ${outcome.detail ?? ''}`) : undefined, { 'molo.task.outcome': outcome.kind });
    this.#settlements.push({ id, leaseToken: flight.task.leaseToken, outcome });
    this.#flush();
  }

  #flush(): void {
    if (this.#flushing !== undefined) return;
    this.#flushing = (async () => {
      while (this.#settlements.length > 0) {
        const batch = this.#settlements;
        this.#settlements = [];
        try {
          await this.pool.queue.settle(this.pool.options.queue, batch);
        } catch (error) {
          // Not settled: the leases run out and the tasks run again (at least once).
          this.ctx.log.warn({ event: 'task.settle_failed', queue: this.pool.options.queue, tasks: batch.length, err: error }, 'task settle failed');
        }
      }
    })().finally(() => {
      this.#flushing = undefined;
      if (this.#settlements.length > 0) this.#flush();
    });
  }

  async #run(): Promise<void> {
    const { queue, options } = this.pool;
    const signal = this.#stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.#maintain();
        const idle = [...this.#workers.values()].filter((worker) => worker.busy === undefined);
        let want = Math.min(idle.length, options.batch);
        if (options.rate !== undefined) want = Math.min(want, options.rate.available());
        const global = options.global?.take(want) ?? want;
        if (global === 0) {
          await this.#idle(options.rate !== undefined && idle.length > 0 ? Math.max(1, Math.min(options.pollMs, options.rate.waitMs())) : options.pollMs);
          continue;
        }
        const tasks = await queue.lease(options.queue, global, options.names === undefined ? {} : { names: options.names });
        if (tasks.length < global) options.global?.release(global - tasks.length);
        failures = 0;
        if (tasks.length === 0) {
          await (queue.waitForWork?.(options.queue, options.pollMs, signal) ?? sleep(options.pollMs, undefined, { signal }).catch(() => undefined));
          continue;
        }
        options.rate?.consume(tasks.length);
        this.#dispatch(tasks, idle);
      } catch (error) {
        if (signal.aborted) return;
        failures++;
        this.ctx.log.warn({ event: 'task.fetch_failed', queue: options.queue, failures, err: error }, 'task fetcher: store call failed');
        if (failures >= MAX_STORE_FAILURES) throw error;
        await sleep(Math.min(5_000, 50 * 2 ** failures), undefined, { signal }).catch(() => undefined);
      }
    }
  }

  #dispatch(tasks: readonly LeasedTask[], idle: WorkerEntry[]): void {
    const { queue, options } = this.pool;
    for (const task of tasks) {
      const worker = idle.pop()!;
      const id = task.envelope.id;
      worker.busy = id;
      const span = this.#tracer.startSpan(TaskSpanName.run, { 'molo.task.queue': options.queue, 'molo.task.name': task.envelope.name, 'molo.task.id': id, 'molo.task.attempts': task.envelope.attempts });
      this.#inFlight.set(id, { task, worker: worker.ref.toString(), span });
      GenServer.cast(this.ctx.system, worker.ref, { kind: 'run', task } satisfies TaskWorkerCast);
    }
    this.pool.counts.running = this.#inFlight.size;
    this.#telemetry?.inFlight.set(options.queue, this.#inFlight.size);
    // A settle that lands first walks the task through START itself; a late markRunning then finds nothing.
    queue.markRunning(options.queue, tasks.map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken }))).catch((error: unknown) => {
      this.ctx.log.warn({ event: 'task.mark_running_failed', queue: options.queue, err: error }, 'task markRunning failed');
    });
  }

  /** Waits for a worker to free up, a shared slot to be released, or `ms`. */
  async #idle(ms: number): Promise<void> {
    const off = this.pool.options.global?.onRelease(() => this.#wake?.());
    const signal = this.#stopping.signal;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
    off?.();
  }

  /** Expired leases of the queue back to it (at most once per poll interval), and the gauges. */
  async #maintain(): Promise<void> {
    const now = Date.now();
    const { queue, options } = this.pool;
    if (now - this.#maintainedAt >= options.pollMs) {
      this.#maintainedAt = now;
      await queue.expireLeases(options.queue);
    }
    if (now - this.#infoAt >= INFO_INTERVAL_MS) {
      this.#infoAt = now;
      await queue.queueInfo(options.queue);
    }
  }

  async #renew(): Promise<void> {
    const held = [...this.#inFlight.values()].map((flight) => ({ id: flight.task.envelope.id, leaseToken: flight.task.leaseToken }));
    if (held.length === 0) return;
    let lost: string[];
    try {
      lost = await this.pool.queue.heartbeat(this.pool.options.queue, held);
    } catch (error) {
      this.ctx.log.warn({ event: 'task.heartbeat_failed', queue: this.pool.options.queue, err: error }, 'task heartbeat failed');
      return;
    }
    for (const id of lost) {
      const flight = this.#inFlight.get(id);
      if (flight === undefined) continue;
      // Cancelled or expired: the queue has moved on, so nothing is settled; the handler is told to stop.
      this.#inFlight.delete(id);
      this.pool.options.global?.release();
      this.pool.counts.running = this.#inFlight.size;
      flight.span?.end(new Error('lease lost'), { 'molo.task.outcome': 'lease-lost' });
      const worker = this.#workers.get(flight.worker);
      if (worker !== undefined) GenServer.cast(this.ctx.system, worker.ref, { kind: 'abort', id, reason: 'task cancelled or its lease was lost' } satisfies TaskWorkerCast);
    }
  }

  override async terminate(): Promise<void> {
    this.#stopping.abort();
    this.#wake?.();
    await this.#loop;
    const deadline = Date.now() + this.pool.drainMs;
    while (this.#inFlight.size > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now())));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    clearInterval(this.#heartbeat);
    for (const flight of [...this.#inFlight.values()]) {
      const worker = this.#workers.get(flight.worker);
      if (worker !== undefined) GenServer.cast(this.ctx.system, worker.ref, { kind: 'abort', id: flight.task.envelope.id, reason: 'shutdown deadline' } satisfies TaskWorkerCast);
      this.#finish(flight, { kind: 'released' });
    }
    const flushed = (async () => {
      while (this.#flushing !== undefined) await this.#flushing;
    })();
    await Promise.race([flushed, sleep(FINAL_FLUSH_MS)]);
    this.pool.listener = undefined;
    if (this.pool.fetcher?.equals(this.self) === true) this.pool.fetcher = undefined;
    this.#telemetry?.inFlight.set(this.pool.options.queue, 0);
  }
}

/** A worker's report as a settlement outcome (R7-6 failure reasons). */
function outcomeOf(report: Extract<TaskWorkerReport, { kind: 'task-done' }>, task: LeasedTask): TaskOutcome {
  if (report.ok) return { kind: 'succeeded' };
  const error = report.error;
  const detail = describeFailure(error);
  if (error instanceof PermanentTaskFailure) return { kind: 'failed', reason: 'permanent', permanent: true, detail };
  if (error instanceof TaskHardTimeout) return { kind: 'failed', reason: 'hard-timeout', detail };
  // The executor aborted the signal at the soft timeout and the handler then failed.
  if (report.elapsedMs >= task.envelope.timeout_soft_ms) return { kind: 'failed', reason: 'soft-timeout', detail };
  return { kind: 'failed', reason: 'error', detail };
}

/**
 * The pool's fetcher: one per pool. It keeps up to `batch` leased tasks in a local buffer (leasing
 * again when the buffer is half empty, one statement per lease), hands them to idle TaskWorkers as
 * they free up (within the shared concurrency limit and the rate limit; by lease order, so by
 * priority), marks started tasks running and settles finished ones in coalesced batches, renews
 * every held lease each heartbeat (aborting handlers whose lease was lost: cancelled, expired),
 * returns expired leases of its queue and refreshes the queue's gauges. Its loop runs beside its
 * mailbox.
 *
 * Shutdown (R7-9) is its `terminate`: stop leasing, let running tasks finish until the drain
 * deadline, then abort the rest and settle them `released` (back to the queue, reason shutdown,
 * not an attempt; or the DLQ on a queue configured so); buffered tasks never started are released
 * at once. Workers stop after it (they come first in
 * the pool supervisor's children), so they are there to finish while it drains.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { exponentialBackoff } from '../../actors/backoff.js';
import { clockInterval, type ClockInterval } from '../../actors/clock.js';
import type { DownMessage, MonitorRef, Ref } from '../../actors/index.js';
import { GenServer, Supervisor } from '../../behaviours/index.js';
import { RuntimeTracer, type TelemetrySpan } from '../../telemetry/index.js';
import type { LeasedTask, TaskOutcome, TaskProgressUpdate, TaskSettlement } from './api.js';
import type { TaskTelemetry } from './metrics.js';
import { BatchFlusher, outcomeOf } from './pool-batches.js';
import type { TaskPoolHandle } from './pool-handle.js';
import { describeFailure } from './transitions.js';
import type { TaskWorkerCast, TaskWorkerReport, TaskWorkerServer } from './worker.js';
import { TaskSpanName } from './spans.js';

export { TaskSpanName };

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
  /** Ids of the tasks it runs for this fetcher. */
  readonly running: Set<string>;
  /** Running tasks of an earlier fetcher (it crashed): no room until it reports one. */
  unknown: boolean;
}

const INFO_INTERVAL_MS = 5_000;
const MAX_STORE_FAILURES = 10;
/** Pause after the n-th failed store call in a row: 100 ms, doubling, at most 5 s. */
const STORE_FAILURE_BACKOFF = { baseMs: 50, capMs: 5_000 };
const FINAL_FLUSH_MS = 10_000;
/**
 * A task is marked `running` in the store once its handler has run this long: a settle that comes
 * first walks it through START itself (same history, same events), so short tasks cost no
 * markRunning statement, and long ones still show as running.
 */
const MARK_RUNNING_AFTER_MS = 50;

/** The fetcher's calls: its counts, or a new in-flight limit (answered with the counts after it). */
export type TaskFetcherCall = 'status' | { readonly concurrency: number };

export class TaskFetcherServer extends GenServer<TaskFetcherCall, ReturnType<TaskPoolHandle['stats']>, never, TaskWorkerReport | DownMessage | { readonly crash: unknown }> {
  readonly #workers = new Map<string, WorkerEntry>();
  readonly #inFlight = new Map<string, InFlight>();
  /** Leased, not yet handed to a worker; in lease order. */
  #buffer: LeasedTask[] = [];
  readonly #settler: BatchFlusher<TaskSettlement>;
  readonly #starter: BatchFlusher<{ id: string; leaseToken: number }>;
  readonly #progress: BatchFlusher<TaskProgressUpdate>;
  #offGlobal: (() => void) | undefined;
  /** Started, not yet marked running (see MARK_RUNNING_AFTER_MS). */
  readonly #pendingStart = new Map<string, number>();
  #startTimer: NodeJS.Timeout | undefined;
  /** A dispatch waiting for this turn's reports (workers that run several tasks at once). */
  #dispatchSoon: NodeJS.Immediate | undefined;
  readonly #stopping = new AbortController();
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #heartbeat: ClockInterval | undefined;
  #maintainedAt = Number.NEGATIVE_INFINITY;
  #infoAt = Number.NEGATIVE_INFINITY;
  readonly #tracer = new RuntimeTracer();

  constructor(private readonly pool: TaskPoolHandle) {
    super();
    const { queue, options } = pool;
    this.#settler = new BatchFlusher(
      (batch) => queue.settle(options.queue, batch),
      // Not settled: the leases run out and the tasks run again (at least once).
      (error, tasks) => this.ctx.log.warn({ event: 'task.settle_failed', queue: options.queue, tasks, err: error }, 'task settle failed'),
    );
    // Many reports of one task in a batch are one write (the store keeps the latest).
    this.#progress = new BatchFlusher(
      (batch) => queue.reportProgress(options.queue, batch),
      (error) => this.ctx.log.warn({ event: 'task.progress_failed', queue: options.queue, err: error }, 'task progress write failed'),
    );
    // A settle that lands first walks the task through START itself; a late markRunning then finds nothing.
    this.#starter = new BatchFlusher(
      (batch) => queue.markRunning(options.queue, batch),
      (error) => this.ctx.log.warn({ event: 'task.mark_running_failed', queue: options.queue, err: error }, 'task markRunning failed'),
    );
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
    // Renewals, lease expiry passes and the drain deadline follow the system's clock, as the queue's lease times do.
    this.#heartbeat = clockInterval(this.ctx.system.clock, heartbeatMs, () => void this.#renew());
    this.#offGlobal = options.global?.onRelease(() => this.#dispatch());
    // Killed (no terminate): the loop and timers must not outlive the actor and lease for nobody.
    this.ctx.signal.addEventListener('abort', () => this.#halt(), { once: true });
    this.#loop = this.#run().catch((error: unknown) => {
      if (!this.#stopping.signal.aborted) this.ctx.send(this.self, { crash: error });
    });
  }

  override handleCall(request: TaskFetcherCall): ReturnType<TaskPoolHandle['stats']> {
    if (request !== 'status') {
      // Held to 1..the start's concurrency (TaskWorkerPool.setConcurrency checked it is a whole number ≥ 1).
      this.pool.concurrency = Math.min(this.pool.options.concurrency, Math.max(1, Math.floor(request.concurrency)));
      // A raise may let buffered tasks go now; a cut lets in-flight ones finish and hands out no more until under it.
      this.#dispatch();
    }
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
    const busy = askBusy ? (await GenServer.call<TaskWorkerServer>(this.ctx.system, ref, 'busy').catch(() => true)) === true : false;
    this.#workers.set(key, { ref, monitor: this.ctx.monitor(ref), running: new Set(), unknown: busy });
    this.pool.workerCount = this.#workers.size;
    this.#wake?.();
  }

  #down(message: DownMessage): void {
    const key = message.ref.toString();
    const entry = this.#workers.get(key);
    if (entry === undefined) return;
    this.#workers.delete(key);
    this.pool.up.delete(key);
    this.pool.workerCount = this.#workers.size;
    for (const id of entry.running) {
      const flight = this.#inFlight.get(id);
      if (flight !== undefined && flight.worker === key) {
        this.#finish(flight, { kind: 'failed', reason: 'error', detail: `worker exited: ${describeFailure(message.reason)}` });
      }
    }
  }

  #onReport(report: TaskWorkerReport): void {
    if (report.kind === 'task-progress') {
      this.#progress.push({ id: report.task.envelope.id, leaseToken: report.task.leaseToken, progress: report.json });
      return;
    }
    if (report.kind === 'task-worker-up') {
      this.#dispatch();
      return;
    }
    if (report.kind !== 'task-done') return;
    const { task } = report;
    this.pool.observe(report.elapsedMs);
    const entry = this.#workers.get(report.worker.toString());
    if (entry !== undefined) {
      entry.running.delete(task.envelope.id);
      entry.unknown = false;
    }
    const flight = this.#inFlight.get(task.envelope.id);
    if (flight !== undefined && flight.task.leaseToken === task.leaseToken) this.#finish(flight, outcomeOf(report, task));
    // Handed out by an earlier fetcher of this pool (it crashed): settled all the same. A lease
    // that moved on in the meantime (cancelled, expired, released) makes the store skip it.
    else if (flight === undefined && !this.#stopping.signal.aborted) this.#settler.push({ id: task.envelope.id, leaseToken: task.leaseToken, outcome: outcomeOf(report, task) });
    this.#wake?.();
  }

  /** A run ended (or was given up on): settle it, free its slot. */
  #finish(flight: InFlight, outcome: TaskOutcome): void {
    const id = flight.task.envelope.id;
    this.#inFlight.delete(id);
    this.#pendingStart.delete(id);
    this.pool.options.global?.release();
    this.pool.counts.running = this.#inFlight.size;
    this.#telemetry?.inFlight.set(this.pool.options.queue, this.#inFlight.size);
    if (outcome.kind === 'succeeded') this.pool.counts.succeeded++;
    else if (outcome.kind === 'failed') this.pool.counts.failed++;
    flight.span?.end(outcome.kind === 'failed' ? new Error(`${outcome.reason}: ${outcome.detail ?? ''}`) : undefined, { 'molo.task.outcome': outcome.kind });
    this.#settler.push({ id, leaseToken: flight.task.leaseToken, outcome });
    // Tasks of one host settle together: dispatched once they all reported, they go back as one batch.
    if (this.pool.prefetch === 1) this.#dispatch();
    else
      this.#dispatchSoon ??= setImmediate(() => {
        this.#dispatchSoon = undefined;
        this.#dispatch();
      });
  }

  async #run(): Promise<void> {
    const { queue, options } = this.pool;
    const signal = this.#stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.#maintain();
        this.#dispatch();
        const room = options.batch - this.#buffer.length;
        // Lease again once the buffer is half empty, so a lease is a batch, not a task.
        if (room < Math.max(1, Math.ceil(options.batch / 2))) {
          await this.#idle(this.#blockedMs());
          continue;
        }
        const tasks = await queue.lease(options.queue, room, options.names === undefined ? {} : { names: options.names });
        failures = 0;
        this.#buffer.push(...tasks);
        this.#dispatch();
        if (tasks.length > 0) continue;
        if (this.#buffer.length > 0) await this.#idle(this.#blockedMs());
        else await (queue.waitForWork?.(options.queue, options.pollMs, signal) ?? sleep(options.pollMs, undefined, { signal }).catch(() => undefined));
      } catch (error) {
        if (signal.aborted) return;
        failures++;
        this.ctx.log.warn({ event: 'task.fetch_failed', queue: options.queue, failures, err: error }, 'task fetcher: store call failed');
        if (failures >= MAX_STORE_FAILURES) throw error;
        await sleep(exponentialBackoff(STORE_FAILURE_BACKOFF, failures), undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /** Tasks still running after MARK_RUNNING_AFTER_MS are marked `running`, in one statement. */
  #markStarted(): void {
    this.#startTimer = undefined;
    for (const [id, leaseToken] of this.#pendingStart) if (this.#inFlight.has(id)) this.#starter.push({ id, leaseToken });
    this.#pendingStart.clear();
  }

  /** How long the loop may sleep: until a rate-limited start is allowed, or a poll interval. */
  #blockedMs(): number {
    const rate = this.pool.options.rate;
    return rate !== undefined && this.#buffer.length > 0 ? Math.max(1, Math.min(this.pool.options.pollMs, rate.waitMs())) : this.pool.options.pollMs;
  }

  /**
   * Hands buffered tasks to workers with room, in lease order, while the limits allow: at most
   * `concurrency` in flight, each worker up to `prefetch` (fixed, or as adapted), filled one worker
   * at a time so its tasks travel to its host together; only workers whose host is up.
   */
  #dispatch(): void {
    const { options, up } = this.pool;
    if (this.#buffer.length === 0) return;
    const prefetch = this.pool.prefetch;
    let started = 0;
    for (const worker of this.#workers.values()) {
      // Not while its host boots: the task would wait for it while a host that is up sits idle.
      if (worker.unknown || !up.has(worker.ref.toString())) continue;
      const tasks: LeasedTask[] = [];
      while (
        this.#buffer.length > 0 &&
        worker.running.size < prefetch &&
        this.#inFlight.size < this.pool.concurrency &&
        !this.#stopping.signal.aborted &&
        (options.rate === undefined || options.rate.available() >= 1) &&
        (options.global === undefined || options.global.take(1) === 1)
      ) {
        options.rate?.consume(1);
        const task = this.#buffer.shift()!;
        const id = task.envelope.id;
        worker.running.add(id);
        const span = this.#tracer.startSpan(TaskSpanName.run, { 'molo.task.queue': options.queue, 'molo.task.name': task.envelope.name, 'molo.task.id': id, 'molo.task.attempts': task.envelope.attempts }, task.envelope.trace_context);
        this.#inFlight.set(id, { task, worker: worker.ref.toString(), span });
        this.#pendingStart.set(id, task.leaseToken);
        tasks.push(task);
      }
      if (tasks.length > 0) GenServer.cast(this.ctx.system, worker.ref, { kind: 'run', tasks } satisfies TaskWorkerCast);
      started += tasks.length;
      if (this.#buffer.length === 0 || this.#inFlight.size >= this.pool.concurrency) break;
    }
    if (started > 0) {
      this.#startTimer ??= setTimeout(() => this.#markStarted(), MARK_RUNNING_AFTER_MS);
      this.pool.counts.running = this.#inFlight.size;
      this.#telemetry?.inFlight.set(options.queue, this.#inFlight.size);
    }
    if (this.#buffer.length < Math.ceil(options.batch / 2)) this.#wake?.();
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
    const now = this.ctx.system.clock.now();
    const { queue, options } = this.pool;
    if (now - this.#maintainedAt >= options.pollMs) {
      this.#maintainedAt = now;
      await queue.expireLeases(options.queue);
    }
    if (now - this.#infoAt >= INFO_INTERVAL_MS) {
      this.#infoAt = now;
      const info = await queue.queueInfo(options.queue);
      this.pool.info = { depth: info.depth, deadLetters: info.deadLetters };
    }
  }

  async #renew(): Promise<void> {
    const held = [...this.#inFlight.values()].map((flight) => flight.task).concat(this.#buffer).map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken }));
    if (held.length === 0) return;
    let lost: string[];
    try {
      lost = await this.pool.queue.heartbeat(this.pool.options.queue, held);
    } catch (error) {
      this.ctx.log.warn({ event: 'task.heartbeat_failed', queue: this.pool.options.queue, err: error }, 'task heartbeat failed');
      return;
    }
    const gone = new Set(lost);
    this.#buffer = this.#buffer.filter((task) => !gone.has(task.envelope.id));
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

  #halt(): void {
    this.#stopping.abort();
    this.#wake?.();
    this.#heartbeat?.cancel();
    clearTimeout(this.#startTimer);
    clearImmediate(this.#dispatchSoon);
    this.#offGlobal?.();
  }

  override async terminate(): Promise<void> {
    this.#stopping.abort();
    this.#wake?.();
    await this.#loop;
    this.#offGlobal?.();
    // Never started: given back at once, so another instance can take them while this one drains.
    for (const task of this.#buffer.splice(0)) this.#settler.push({ id: task.envelope.id, leaseToken: task.leaseToken, outcome: { kind: 'released' } });
    const clock = this.ctx.system.clock;
    const deadline = clock.now() + this.pool.drainMs;
    while (this.#inFlight.size > 0 && clock.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = clock.setTimer(resolve, Math.min(50, Math.max(1, deadline - clock.now())));
        this.#wake = () => {
          clock.clearTimer(timer);
          resolve();
        };
      });
    }
    this.#heartbeat?.cancel();
    clearTimeout(this.#startTimer);
    clearImmediate(this.#dispatchSoon);
    for (const flight of [...this.#inFlight.values()]) {
      const worker = this.#workers.get(flight.worker);
      if (worker !== undefined) GenServer.cast(this.ctx.system, worker.ref, { kind: 'abort', id: flight.task.envelope.id, reason: 'shutdown deadline' } satisfies TaskWorkerCast);
      this.#finish(flight, { kind: 'released' });
    }
    // The bound's timer is cleared once the flush settles: left running, it would hold the process open for its full length.
    const flushBound = new AbortController();
    await Promise.race([
      Promise.all([this.#settler.drain(), this.#starter.drain()]),
      sleep(FINAL_FLUSH_MS, undefined, { signal: flushBound.signal }).catch(() => undefined),
    ]).finally(() => flushBound.abort());
    this.pool.listener = undefined;
    if (this.pool.fetcher?.equals(this.self) === true) this.pool.fetcher = undefined;
    this.#telemetry?.inFlight.set(this.pool.options.queue, 0);
  }
}

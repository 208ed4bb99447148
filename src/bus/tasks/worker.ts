/**
 * TaskWorker: one supervised actor per host (or per concurrent task on the loop), each with its
 * own executor (so a thread or process executor has one host per worker, which a hard timeout can
 * recycle). The pool's fetcher hands it leased tasks (`run`: up to `prefetch` at once, sent to its
 * host together), may abort one (`abort`, on cancel or at the shutdown deadline), and hears back
 * `task-done` for each. Runs go on beside the mailbox, so an abort is read while handlers run. A
 * worker that (re)starts announces itself to the current fetcher.
 */
import type { Ref } from '../../actors/index.js';
import { GenServer } from '../../behaviours/index.js';
import type { LeasedTask, TaskExecutor } from './api.js';
import { createExecutor } from './executors/index.js';
import type { HostProgress } from './executors/host-protocol.js';
import type { TaskTelemetry } from './metrics.js';
import type { TaskPoolHandle, TaskWorkerReport } from './pool-handle.js';

export type { TaskWorkerReport };

export type TaskWorkerCast =
  | { readonly kind: 'run'; readonly tasks: readonly LeasedTask[] }
  | { readonly kind: 'abort'; readonly id: string; readonly reason: string };

/** The behaviour name the admin tree knows workers by. */
export const TASK_WORKER_BEHAVIOUR = 'TaskWorkerServer';

interface Run {
  readonly controller: AbortController;
  readonly task: LeasedTask;
}

export class TaskWorkerServer extends GenServer<'busy' | 'ready', boolean | readonly string[], TaskWorkerCast> {
  #executor: TaskExecutor | undefined;
  readonly #runs = new Map<string, Run>();
  /** Runs handed over past `prefetch` (a fetcher that restarted did not know): they wait their turn. */
  #backlog: LeasedTask[] = [];
  /** Its host was up once (see #booted). */
  #up = false;
  /** Shared by consecutive runs that end well (see #start). */
  #controller: AbortController | undefined;

  constructor(private readonly pool: TaskPoolHandle) {
    super();
  }

  override init(): void {
    const pool = this.pool;
    this.#executor = createExecutor(this.ctx.system, pool.executor, this.self, { booting: (delta) => (pool.booting += delta), booted: (ok, error) => this.#booted(ok, error) }, pool.options.prefetchCap);
    // The loop has no host to wait for (nor one to count).
    if (pool.executor.placement === 'loop') {
      this.#up = true;
      pool.hostBooted(this.self, true);
    }
    const fetcher = this.pool.fetcher;
    if (fetcher !== undefined) this.ctx.send(fetcher, { kind: 'task-worker-join', worker: this.self } satisfies TaskWorkerReport);
  }

  /**
   * Its host's boot settled (recycles too). Up: the fetcher may give it tasks. The pool's first boot
   * failing fails the pool's start with the cause; a later one failing before this worker was ever
   * up restarts the worker under its supervisor (a fresh executor and boot). A host that fails to
   * come back after a recycle or crash is started again by the next run, as before.
   */
  #booted(ok: boolean, error?: unknown): void {
    const queue = this.pool.options.queue;
    (this.pool.queue as { telemetry?: TaskTelemetry }).telemetry?.hostBooted(queue, ok);
    const self = this.self;
    const first = this.pool.hostBooted(self, ok, error);
    if (ok) {
      this.#up = true;
      this.pool.report({ kind: 'task-worker-up', worker: self });
      return;
    }
    if (first || this.#up || this.pool.firstOutcome !== 'up' || this.ctx.signal.aborted) return;
    this.ctx.log.warn({ event: 'task.host_boot_failed', queue, err: error }, 'task host failed to boot: restarting its worker');
    this.ctx.send(self, { crash: error ?? new Error('task host failed to boot') });
  }

  override handleCall(request: 'busy' | 'ready'): boolean | Promise<readonly string[]> {
    if (request === 'ready') return this.#executor!.ready();
    return this.#runs.size > 0;
  }

  override handleCast(message: TaskWorkerCast): void {
    if (message.kind === 'abort') {
      this.#runs.get(message.id)?.controller.abort(new Error(message.reason));
      this.#backlog = this.#backlog.filter((task) => task.envelope.id !== message.id);
      return;
    }
    for (const task of message.tasks) {
      if (this.#runs.size < this.pool.options.prefetchCap) this.#start(task);
      else this.#backlog.push(task);
    }
  }

  #start(task: LeasedTask): void {
    // One controller for run after run until one is aborted or fails: a signal per task was a large
    // share of a short task's cost. A failed run may have left a listener on it (a loop handler
    // abandoned at its hard timeout), so the next run gets a fresh one; so does a run beside
    // others, which an abort of one of them must not reach.
    const alone = this.#runs.size === 0;
    const controller = alone && this.#controller?.signal.aborted === false ? this.#controller : new AbortController();
    if (alone) this.#controller = controller;
    const started = performance.now();
    const id = task.envelope.id;
    this.#runs.set(id, { controller, task });
    this.#executor!.run(task.envelope, controller.signal, (json) => this.pool.report({ kind: 'task-progress', task, json })).then(
      (result) => this.#report(task, true, undefined, started, result),
      (error: unknown) => {
        if (this.#controller === controller) this.#controller = undefined;
        this.#report(task, false, error ?? new Error('handler failed'), started, undefined);
      },
    );
  }

  /** Progress from a thread or process host (HostProgress), for a run still going here. */
  override handleInfo(message: unknown): void {
    const crash = message as { crash?: unknown } | null;
    if (crash !== null && typeof crash === 'object' && 'crash' in crash) throw crash.crash;
    const progress = message as Partial<HostProgress> | null;
    if (progress?.kind !== 'task-host-progress' || typeof progress.id !== 'string' || typeof progress.json !== 'string') return;
    const run = this.#runs.get(progress.id);
    if (run !== undefined) this.pool.report({ kind: 'task-progress', task: run.task, json: progress.json });
  }

  #report(task: LeasedTask, ok: boolean, error: unknown, started: number, result: string | undefined): void {
    this.#runs.delete(task.envelope.id);
    // Straight to the fetcher, not through its mailbox: a fetcher draining in its terminate still hears it.
    this.pool.report({ kind: 'task-done', worker: this.self, task, ok, error, elapsedMs: performance.now() - started, result });
    const next = this.#backlog.shift();
    if (next !== undefined && !this.ctx.signal.aborted) this.#start(next);
  }

  override async terminate(): Promise<void> {
    this.pool.up.delete(this.self.toString());
    for (const run of this.#runs.values()) run.controller.abort(new Error('worker stopping'));
    this.#backlog = [];
    // The executor recycles a stuck host itself; a loop handler that ignores its signal is left behind.
    await this.#executor?.close();
  }
}

import { ActorCell, AWAITING, EXITED, INITIALIZED, SCHEDULED, TRAP_EXIT, toBehaviour, type KernelHost } from './actor-cell.js';
import type { ActorBehaviour, HandlerFunction, ProcessInfo, SpawnOptions } from './behaviour.js';
import { systemClock, type Clock } from './clock.js';
import {
  ActorLimitReached,
  AlreadyNamed,
  CalleeExited,
  CallTimeout,
  InvalidOption,
  NameTaken,
  NoProc,
  SystemStopped,
} from './errors.js';
import type { ExitReason } from './exit.js';
import { resolveMailboxOptions } from './mailbox.js';
import { CallRequest, DownMessage, ExitMessage } from './messages.js';
import { Ref, type MonitorRef } from './ref.js';
import { RingQueue } from './ring-queue.js';
import { TimerService } from './timers.js';
import type { KernelObserver } from './observer.js';
import type { Logger } from '../telemetry/logger-api.js';
import type { BehaviourModule } from './placement/behaviour-module.js';
import type { PlacedSpawnOptions } from './placement/hub.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, MAX_PAYLOAD_LIMIT_BYTES } from './placement/limits.js';
import type { Router } from './placement/router.js';

export interface ActorSystemOptions {
  /** This node's name, carried by every ref; default `local`. */
  readonly node?: string;
  /** Distinguishes incarnations of a node; default random. */
  readonly creation?: number;
  readonly clock?: Clock;
  /** Live actors at most; default {@link DEFAULT_MAX_ACTORS}, cap {@link MAX_ACTORS_CAP}. */
  readonly maxActors?: number;
  /** Callbacks one actor runs before the next ready actor gets its turn; default 1,024. */
  readonly batch?: number;
  /** Callbacks run before yielding to the event loop; default 16,384. */
  readonly budget?: number;
  /** Default timeout of `call`; default 5,000 ms. */
  readonly callTimeoutMs?: number;
  /** Lifecycle hooks for telemetry; absent means no cost. */
  readonly observer?: KernelObserver;
  /** Root of every actor's `ctx.log` (a child bound with the actor's ref, name and behaviour); absent: silent. */
  readonly logger?: Logger;
  /**
   * Cap on one encoded frame crossing a placement boundary (a message, call, reply or spawn
   * argument); default 1 MiB, at most 64 MiB. Over it, `send`/`call` fail with PayloadTooLarge.
   */
  readonly payloadLimitBytes?: number;
}

export const DEFAULT_MAX_ACTORS = 4_194_304;
export const MAX_ACTORS_CAP = 134_217_727;
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;
/** The largest delay a native timer supports. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

const RESOLVED = Promise.resolve();

type Watcher = ActorCell | ((reason: ExitReason, ref: Ref) => void);

/**
 * One node's actors: spawning, the run queue, signals (exits, links, monitors), calls and the
 * registry. Nothing here runs a callback in the caller's stack: `send` only enqueues.
 */
export class ActorSystem implements KernelHost {
  readonly node: string;
  readonly creation: number;
  readonly clock: Clock;
  readonly timers: TimerService;
  /** Sender of signals that come from outside any actor. */
  readonly outside: Ref;
  readonly maxActors: number;
  readonly callTimeoutMs: number;
  readonly observer: KernelObserver | undefined;
  readonly logger: Logger | undefined;
  /** Observer hooks and exit watchers that threw (each is logged); the kernel carried on. */
  hookFailures = 0;
  readonly payloadLimitBytes: number;

  readonly #cells = new Map<number, ActorCell>();
  readonly #names = new Map<string, ActorCell>();
  readonly #runQueue = new RingQueue<ActorCell>();
  readonly #batch: number;
  readonly #budget: number;
  #drainPending = false;
  #nextId = 0;
  #nextMonitor = 0;
  #stopped = false;
  readonly #dying: ActorCell[] = [];
  #propagating = false;
  /** Routes refs of other creations (placed actors' hosts); undefined until something is placed. */
  #router: Router | undefined = undefined;
  /** The observer opens spans: decided once, so an untraced call pays one branch. */
  readonly #tracing: boolean;

  constructor(options: ActorSystemOptions = {}) {
    this.node = options.node ?? 'local';
    this.creation = options.creation ?? 1 + Math.floor(Math.random() * 0x7fff_fffe);
    this.clock = options.clock ?? systemClock;
    this.timers = new TimerService(this.clock);
    this.outside = new Ref(this.node, 0, this.creation);
    this.maxActors = checkInteger('maxActors', options.maxActors ?? DEFAULT_MAX_ACTORS, 1, MAX_ACTORS_CAP);
    this.#batch = checkInteger('batch', options.batch ?? 1_024, 1, 1_000_000);
    this.#budget = checkInteger('budget', options.budget ?? 16_384, 1, 10_000_000);
    this.callTimeoutMs = checkTimeout('callTimeoutMs', options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    this.observer = options.observer;
    this.logger = options.logger;
    this.payloadLimitBytes = checkInteger(
      'payloadLimitBytes',
      options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES,
      1,
      MAX_PAYLOAD_LIMIT_BYTES,
    );
    this.#tracing = typeof options.observer?.startSpan === 'function';
  }

  // ---- spawning -----------------------------------------------------------------------------

  spawn<M>(behaviour: ActorBehaviour<M> | HandlerFunction<M>, options?: SpawnOptions): Ref {
    return this.#spawn(undefined, behaviour, options);
  }

  spawnChild<M>(parent: ActorCell, behaviour: ActorBehaviour<M> | HandlerFunction<M>, options?: SpawnOptions): Ref {
    return this.#spawn(parent.self, behaviour, options);
  }

  #spawn<M>(parent: Ref | undefined, behaviour: ActorBehaviour<M> | HandlerFunction<M>, options?: SpawnOptions): Ref {
    if (this.#stopped) throw new SystemStopped(this.node);
    if (this.#cells.size >= this.maxActors) throw new ActorLimitReached(this.maxActors);
    const logic = toBehaviour(behaviour);
    const mailbox = resolveMailboxOptions(options?.mailbox);
    let linkTo: ActorCell | undefined;
    if (options !== undefined) {
      if (options.name !== undefined) this.#checkNameFree(options.name);
      if (options.link !== undefined) {
        linkTo = options.link._cell as ActorCell | undefined;
        if (linkTo === undefined) throw new NoProc(options.link);
      }
    }
    const ref = new Ref(this.node, ++this.#nextId, this.creation);
    const cell = new ActorCell(this, ref, logic, mailbox, parent ?? options?.parent);
    ref._cell = cell;
    this.#cells.set(ref.id, cell);
    if (options !== undefined) {
      if (options.trapExit) cell.flags |= TRAP_EXIT;
      if (options.name !== undefined) this.registerCell(options.name, cell);
      if (linkTo !== undefined) {
        (cell.links = new Set()).add(linkTo.self);
        (linkTo.links ??= new Set()).add(ref);
      }
      if (options.onStarted !== undefined) {
        cell.onStarted = options.onStarted;
        cell.startLink = options.link;
      }
    }
    if (this.observer !== undefined) this.#observe(() => this.observer!.spawned(cell));
    if (logic.init === undefined) {
      cell.flags |= INITIALIZED;
      const onStarted = cell.onStarted;
      if (onStarted !== undefined) {
        cell.onStarted = cell.startLink = undefined;
        onStarted(undefined);
      }
    } else {
      cell.flags |= SCHEDULED;
      this.enqueueRun(cell);
    }
    return ref;
  }

  /**
   * Spawns an actor from a behaviour module, on this loop or in a worker thread or child process
   * (see docs/placement.md). Resolves with its ref once its init succeeded; the ref works with
   * every operation here, whatever the placement.
   */
  spawnPlaced(behaviour: BehaviourModule, options?: PlacedSpawnOptions): Promise<Ref> {
    return import('./placement/hub.js').then((placement) => placement.spawnPlaced(this, behaviour, options));
  }

  /** @internal Installs the router for refs of other creations (the placement hub, or a host's). */
  setRouter(router: Router): void {
    if (this.#router !== undefined) throw new InvalidOption('router', 'a router is already installed');
    this.#router = router;
  }

  // ---- run queue ---------------------------------------------------------------------------

  enqueueRun(cell: ActorCell): void {
    this.#runQueue.push(cell);
    if (!this.#drainPending) {
      this.#drainPending = true;
      // A resolved promise's then costs less than queueMicrotask, which wraps each callback in an
      // AsyncResource (about 150 ns a hop, paid by every call and every child start).
      RESOLVED.then(this.#drain);
    }
  }

  readonly #drain = (): void => {
    const queue = this.#runQueue;
    const batch = this.#batch;
    let budget = this.#budget;
    while (budget > 0) {
      const cell = queue.shift();
      if (cell === undefined) break;
      if ((cell.flags & (SCHEDULED | AWAITING | EXITED)) !== SCHEDULED) continue;
      const ran = cell.run(budget < batch ? budget : batch);
      budget -= ran > 0 ? ran : 1;
      if ((cell.flags & (SCHEDULED | AWAITING | EXITED)) === SCHEDULED) queue.push(cell);
    }
    // Out of budget with work left: yield to I/O, then continue.
    if (queue.length > 0) setImmediate(this.#drain);
    else this.#drainPending = false;
  };

  /** Resolves once no actor is ready to run (async callbacks waiting on I/O may still be pending). */
  async settle(maxRounds = 10_000): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.#drainPending && this.#runQueue.length === 0) return;
    }
  }

  // ---- messages and calls ------------------------------------------------------------------

  send(target: Ref | string, message: unknown): void {
    const cell = this.#lookup(target);
    // Sending to a dead ref is silent, as in OTP; an unknown name is an error.
    if (cell === undefined) {
      this.#sendElsewhere(target, message);
      return;
    }
    cell.deliver(message);
  }

  /** No local actor: a name or ref of another creation may still be routed (placed actors). */
  #sendElsewhere(target: Ref | string, message: unknown): void {
    if (typeof target === 'string') {
      if (this.#router?.sendName(target, message) !== true) throw new NoProc(target);
    } else if (target.creation !== this.creation) {
      this.#router?.send(target, message);
    }
  }

  call<Reply = unknown>(target: Ref | string, request: unknown, timeoutMs?: number): Promise<Reply> {
    return this.callFrom(target, request, timeoutMs) as Promise<Reply>;
  }

  callFrom(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    if (this.#tracing) return this.#tracedCall(target, request, timeoutMs);
    return this.#call(target, request, timeoutMs);
  }

  /** A call inside a `molo.call` span, when the observer records one. */
  #tracedCall(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const span = this.observer!.startSpan!('molo.call', { 'molo.callee': target, 'molo.node': this.node });
    if (span === undefined) return this.#call(target, request, timeoutMs);
    let promise: Promise<unknown>;
    try {
      promise = this.#call(target, request, timeoutMs);
    } catch (error) {
      span.end(error);
      throw error;
    }
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

  #call(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const cell = this.#lookup(target);
    if (cell === undefined) return this.#callElsewhere(target, request, timeoutMs);
    const timeout = timeoutMs === undefined ? this.callTimeoutMs : checkTimeout('call timeout', timeoutMs);
    const call = new CallRequest(request, cell.self);
    const promise = new Promise<unknown>((resolve, reject) => {
      call._resolve = resolve;
      call._reject = reject;
    });
    call._settle = this.#settleCall;
    const head = cell.calls;
    if (head !== null) {
      head._prev = call;
      call._next = head;
    }
    cell.calls = call;
    call._timeoutMs = timeout;
    call._timer = this.timers.schedule(timeout, expireCall, call);
    try {
      cell.deliver(call);
    } catch (error) {
      this.#settleCall(call, false, error);
    }
    return promise;
  }

  /** A call to an actor of another creation: the caller-side timer is armed here, the router delivers. */
  #callElsewhere(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const router = this.#router;
    const callee =
      router === undefined
        ? undefined
        : typeof target === 'string'
          ? router.whereis(target)
          : target.creation !== this.creation
            ? target
            : undefined;
    if (callee === undefined) return Promise.reject(new NoProc(target));
    const timeout = timeoutMs === undefined ? this.callTimeoutMs : checkTimeout('call timeout', timeoutMs);
    const call = new CallRequest(request, callee);
    const promise = new Promise<unknown>((resolve, reject) => {
      call._resolve = resolve;
      call._reject = reject;
    });
    call._settle = this.#settleCall;
    call._timeoutMs = timeout;
    call._timer = this.timers.schedule(timeout, expireCall, call);
    try {
      router!.call(call);
    } catch (error) {
      call._settle?.(call, false, error);
    }
    return promise;
  }

  readonly #settleCall = (call: CallRequest, ok: boolean, value: unknown): void => {
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

  #lookup(target: Ref | string): ActorCell | undefined {
    if (typeof target === 'string') return this.#names.get(target);
    return (target._cell as ActorCell | undefined) ?? this.#byId(target);
  }

  /** A ref rebuilt from its parts (not the object spawn returned) still reaches a live local actor. */
  #byId(ref: Ref): ActorCell | undefined {
    return ref.creation === this.creation && ref.node === this.node ? this.#cells.get(ref.id) : undefined;
  }

  // ---- exits, links, monitors -------------------------------------------------------------

  exit(target: Ref, reason: ExitReason): void {
    this.exitSignal(target, this.outside, reason);
  }

  /** OTP's exit/2: `kill` is untrappable; a trapping target gets a message; `normal` is ignored. */
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void {
    const cell = target._cell as ActorCell | undefined;
    if (cell === undefined) {
      if (target.creation !== this.creation) this.#router?.exitSignal(target, from, reason);
      return;
    }
    if (reason === 'kill') this.terminateCell(cell, 'killed');
    else if (cell.flags & TRAP_EXIT) cell.deliverSignal(new ExitMessage(from, reason));
    else if (reason !== 'normal' || from === target) this.terminateCell(cell, reason);
  }

  /** A linked actor exited: the same rules, except that a link never carries an untrappable kill. */
  #linkSignal(cell: ActorCell, from: Ref, reason: ExitReason): void {
    if (cell.flags & TRAP_EXIT) cell.deliverSignal(new ExitMessage(from, reason));
    else if (reason !== 'normal') this.terminateCell(cell, reason);
  }

  /**
   * @internal A linked actor elsewhere (another creation) exited: `target` drops the link and gets
   * the signal, as from a local link. Nothing happens if they are no longer linked.
   */
  linkExit(target: Ref, from: Ref, reason: ExitReason): void {
    const cell = target._cell as ActorCell | undefined;
    if (cell === undefined || cell.links === null || !cell.links.delete(from)) return;
    this.#linkSignal(cell, from, reason);
  }

  terminateCell(cell: ActorCell, reason: ExitReason): void {
    if (cell.flags & EXITED) return;
    cell.flags |= EXITED;
    cell.exitReason = reason === 'kill' ? 'killed' : reason;
    this.#dying.push(cell);
    if (this.#propagating) return;
    // A worklist, not recursion: a long chain of links must not overflow the stack.
    this.#propagating = true;
    try {
      let next: ActorCell | undefined;
      while ((next = this.#dying.pop()) !== undefined) this.#finalize(next);
    } finally {
      this.#propagating = false;
    }
  }

  #finalize(cell: ActorCell): void {
    const reason = cell.exitReason!;
    const ref = cell.self;
    this.#cells.delete(ref.id);
    ref._cell = undefined;
    if (cell.name !== undefined && this.#names.get(cell.name) === cell) {
      this.#names.delete(cell.name);
      this.#router?.unregistered(cell.name, ref);
    }
    cell.release(reason);
    for (let call = cell.calls; call !== null; ) {
      const next: CallRequest | null = call._next;
      call._prev = call._next = null;
      this.#settleCall(call, false, new CalleeExited(ref, reason));
      call = next;
    }
    cell.calls = null;
    if (cell.monitoring !== null) {
      for (const [id, target] of cell.monitoring) {
        const other = target._cell as ActorCell | undefined;
        if (other !== undefined) other.monitoredBy?.delete(id);
        else if (target.creation !== this.creation) this.#router?.demonitor(target, id);
      }
      cell.monitoring = null;
    }
    if (cell.links !== null) {
      const links = cell.links;
      cell.links = null;
      for (const linked of links) {
        const other = linked._cell as ActorCell | undefined;
        if (other === undefined) {
          if (linked.creation !== this.creation) this.#router?.linkExited(linked, ref, reason);
          continue;
        }
        other.links?.delete(ref);
        this.#linkSignal(other, ref, reason);
      }
    }
    if (cell.monitoredBy !== null) {
      const watchers = cell.monitoredBy;
      cell.monitoredBy = null;
      for (const [id, watcher] of watchers) this.#notifyWatcher(watcher, id, ref, reason);
    }
    if (this.observer !== undefined) this.#observe(() => this.observer!.exited(cell, reason));
  }

  #notifyWatcher(watcher: Watcher, id: MonitorRef, ref: Ref, reason: ExitReason): void {
    if (watcher instanceof ActorCell) {
      watcher.monitoring?.delete(id);
      watcher.deliverSignal(new DownMessage(id, ref, reason));
    } else {
      this.#observe(() => watcher(reason, ref));
    }
  }

  /**
   * Runs a hook (an observer, an exit watcher) inside the kernel's own work: one that throws must
   * not stop exit propagation or the run queue, so the failure is counted and logged instead.
   */
  #observe(hook: () => void): void {
    try {
      hook();
    } catch (error) {
      this.hookFailures++;
      this.logger?.error({ err: error }, 'a kernel hook (observer or exit watcher) threw');
    }
  }

  linkCells(cell: ActorCell, target: Ref): void {
    const other = target._cell as ActorCell | undefined;
    // An exited actor (a handler that outlived it) links to nothing: no stale entry on the target.
    if (other === cell || cell.flags & EXITED) return;
    if (other === undefined) {
      if (target.creation !== this.creation && this.#router !== undefined) {
        (cell.links ??= new Set()).add(target);
        this.#router.link(cell, target);
        return;
      }
      this.#linkSignal(cell, target, 'noproc');
      return;
    }
    (cell.links ??= new Set()).add(target);
    (other.links ??= new Set()).add(cell.self);
  }

  unlinkCells(cell: ActorCell, target: Ref): void {
    cell.links?.delete(target);
    const other = target._cell as ActorCell | undefined;
    if (other !== undefined) other.links?.delete(cell.self);
    else if (target.creation !== this.creation) this.#router?.unlink(cell, target);
  }

  nextMonitorId(): number {
    return ++this.#nextMonitor;
  }

  addMonitor(watcher: Watcher, target: Ref): MonitorRef {
    const id = ++this.#nextMonitor;
    if (watcher instanceof ActorCell && watcher.flags & EXITED) return id;
    const cell = target._cell as ActorCell | undefined;
    if (cell === undefined) {
      if (target.creation !== this.creation && this.#router !== undefined) {
        if (watcher instanceof ActorCell) (watcher.monitoring ??= new Map()).set(id, target);
        this.#router.monitor(watcher, target, id);
        return id;
      }
      this.#notifyWatcher(watcher, id, target, 'noproc');
      return id;
    }
    (cell.monitoredBy ??= new Map()).set(id, watcher);
    if (watcher instanceof ActorCell) (watcher.monitoring ??= new Map()).set(id, target);
    return id;
  }

  removeMonitor(watcher: ActorCell, monitor: MonitorRef): void {
    const target = watcher.monitoring?.get(monitor);
    if (target === undefined) return;
    watcher.monitoring!.delete(monitor);
    const cell = target._cell as ActorCell | undefined;
    if (cell !== undefined) cell.monitoredBy?.delete(monitor);
    else if (target.creation !== this.creation) this.#router?.demonitor(target, monitor);
  }

  /** Watches an actor from outside any actor: `callback` runs synchronously at its exit. */
  watch(target: Ref, callback: (reason: ExitReason, ref: Ref) => void): () => void {
    const id = this.addMonitor(callback, target);
    return () => {
      const cell = target._cell as ActorCell | undefined;
      if (cell !== undefined) cell.monitoredBy?.delete(id);
      else if (target.creation !== this.creation) this.#router?.demonitor(target, id);
    };
  }

  exited(target: Ref): Promise<ExitReason> {
    return new Promise((resolve) => this.addMonitor((reason) => resolve(reason), target));
  }

  // ---- registry -------------------------------------------------------------------------------

  register(name: string, target: Ref): void {
    const cell = target._cell as ActorCell | undefined;
    if (cell === undefined) throw new NoProc(target);
    this.registerCell(name, cell);
  }

  registerCell(name: string, cell: ActorCell): void {
    // An exited actor's name would never be freed.
    if (cell.flags & EXITED) throw new NoProc(cell.self);
    this.#checkNameFree(name);
    if (cell.name !== undefined) throw new AlreadyNamed(cell.self, cell.name);
    this.#names.set(name, cell);
    cell.name = name;
    this.#router?.registered(name, cell.self);
  }

  #checkNameFree(name: string): void {
    if (typeof name !== 'string' || name.length === 0) throw new InvalidOption('name', 'must be a non-empty string');
    const holder = this.#names.get(name);
    if (holder !== undefined) throw new NameTaken(name, holder.self);
    const elsewhere = this.#router?.whereis(name);
    if (elsewhere !== undefined) throw new NameTaken(name, elsewhere);
  }

  unregister(name: string): boolean {
    const cell = this.#names.get(name);
    if (cell === undefined) return false;
    this.#names.delete(name);
    cell.name = undefined;
    this.#router?.unregistered(name, cell.self);
    return true;
  }

  whereis(name: string): Ref | undefined {
    return this.#names.get(name)?.self ?? this.#router?.whereis(name);
  }

  registered(): string[] {
    return [...this.#names.keys()];
  }

  // ---- introspection ----------------------------------------------------------------------------

  /** For an actor of another creation (a placed actor): best effort, its host is up. */
  isAlive(target: Ref): boolean {
    if (target._cell !== undefined) return true;
    return target.creation !== this.creation && this.#router !== undefined && this.#router.isAlive(target);
  }

  info(target: Ref | string): ProcessInfo | undefined {
    return this.#lookup(target)?.info();
  }

  /** Refs of every live actor, oldest first. */
  processes(): Ref[] {
    const refs: Ref[] = [];
    for (const cell of this.#cells.values()) refs.push(cell.self);
    return refs;
  }

  get actorCount(): number {
    return this.#cells.size;
  }

  /** Timers armed by actors and calls; a leak check expects zero between tests. */
  get timerCount(): number {
    return this.timers.size;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Stops the node hard: no more spawns; every remaining actor exits with `shutdown`, newest first,
   * without its terminate callback. Stop root supervisors first for an orderly shutdown.
   */
  shutdown(): void {
    this.#stopped = true;
    const cells = [...this.#cells.values()].reverse();
    for (const cell of cells) this.terminateCell(cell, 'shutdown');
    this.#router?.shutdown();
  }
}


function expireCall(call: CallRequest): void {
  call._timer = null;
  call._settle?.(call, false, new CallTimeout(call.callee, call._timeoutMs));
}

function checkInteger(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOption(option, `must be an integer in ${min}..${max}, got ${value}`);
  }
  return value;
}

function checkTimeout(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0) || value > MAX_TIMEOUT_MS) {
    throw new InvalidOption(option, `must be in 0..${MAX_TIMEOUT_MS} ms, got ${value}`);
  }
  return value;
}

import { ActorCell, toBehaviour, type KernelHost } from './actor-cell.js';
import type { ActorBehaviour, HandlerFunction, SpawnOptions } from './behaviour.js';
import { Calls, endSpanWith } from './calls.js';
import { CellFlag } from './cell-flags.js';
import type { Clock } from './clock.js';
import { ActorLimitReached, InvalidOption, NoProc, SystemStopped } from './errors.js';
import type { ExitReason } from './exit.js';
import { resolveMailboxOptions } from './mailbox.js';
import type { KernelObserver } from './observer.js';
import type { ProcessInfo } from './process-info.js';
import { Ref, type MonitorRef } from './ref.js';
import { NameRegistry } from './registry.js';
import { Scheduler } from './scheduler.js';
import { ExitSignals, type SignalHost } from './signals.js';
import { resolveSystemOptions, type ActorSystemOptions } from './system-options.js';
import { TimerService } from './timers.js';
import type { Logger } from '../telemetry/logger-api.js';
import { resolveLogger, type LoggerOption } from '../telemetry/logger.js';
import { logExit } from '../telemetry/reports.js';
import type { BehaviourModule } from './placement/behaviour-module.js';
import type { PlacedSpawnOptions } from './placement/hub.js';
import type { RoutedSystem, Router, Watcher } from './placement/router.js';

const { EXITED, INITIALIZED, SCHEDULED, TRAP_EXIT } = CellFlag;

/**
 * One node's actors: spawning, sends and calls, and each actor's exit. It runs ready actors as a
 * Scheduler (scheduler.ts); signals (exits, links, monitors), calls in flight and names are kept
 * by parts it owns (signals.ts, calls.ts, registry.ts). Spawn, send and the run queue stay in
 * this object, so the hot paths take no extra hop. Nothing here runs a callback in the caller's
 * stack: `send` only enqueues.
 */
export class ActorSystem extends Scheduler implements KernelHost, RoutedSystem, SignalHost {
  readonly node: string;
  readonly creation: number;
  readonly clock: Clock;
  readonly timers: TimerService;
  /** Sender of signals that come from outside any actor. */
  readonly outside: Ref;
  readonly maxActors: number;
  readonly callTimeoutMs: number;
  readonly observer: KernelObserver | undefined;
  /** Observer hooks and exit watchers that threw (each is logged); the kernel carried on. */
  hookFailures = 0;
  readonly payloadLimitBytes: number;

  readonly #cells = new Map<number, ActorCell>();
  readonly #registry = new NameRegistry(this);
  readonly #calls: Calls;
  readonly #signals: ExitSignals;
  #nextId = 0;
  #stopped = false;
  readonly #dying: ActorCell[] = [];
  #propagating = false;
  /** Routes refs of this node's other creations (placed actors' hosts); undefined until something is placed. */
  #router: Router | undefined = undefined;
  /** Routes to other nodes, by node name (the nodes layer's links); undefined until one is installed. */
  #nodeRoutes: Map<string, Router> | undefined = undefined;
  /** Routes refs of a node that has no route of its own (the nodes layer, for nodes not connected). */
  #remoteRouter: Router | undefined = undefined;
  /** The observer opens spans: decided once, so an untraced call pays one branch. */
  readonly #tracing: boolean;
  readonly #loggerOption: LoggerOption | undefined;
  #logger: Logger | undefined = undefined;

  constructor(options: ActorSystemOptions = {}) {
    const resolved = resolveSystemOptions(options);
    super(resolved.batch, resolved.budget);
    this.node = resolved.node;
    this.creation = resolved.creation;
    this.clock = resolved.clock;
    this.maxActors = resolved.maxActors;
    this.callTimeoutMs = resolved.callTimeoutMs;
    this.payloadLimitBytes = resolved.payloadLimitBytes;
    this.observer = options.observer;
    this.#loggerOption = options.logger;
    this.timers = new TimerService(this.clock);
    this.outside = new Ref(this.node, 0, this.creation);
    this.#tracing = typeof options.observer?.startSpan === 'function';
    this.#calls = new Calls(this.timers, this.callTimeoutMs);
    this.#signals = new ExitSignals(this);
  }

  /** The root logger (the `logger` option resolved on first use, so pino loads only when something logs). */
  get logger(): Logger {
    return (this.#logger ??= resolveLogger(this.#loggerOption));
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
      if (options.name !== undefined) this.#registry.checkFree(options.name);
      if (options.link !== undefined) {
        linkTo = this.cellOf(options.link);
        if (linkTo === undefined) throw new NoProc(options.link);
      }
    }
    const ref = new Ref(this.node, ++this.#nextId, this.creation);
    const cell = new ActorCell(this, ref, logic, mailbox, parent ?? options?.parent);
    ref._cell = cell;
    this.#cells.set(ref.id, cell);
    if (options !== undefined) {
      if (options.trapExit) cell.flags |= TRAP_EXIT;
      if (options.name !== undefined) this.#registry.register(options.name, cell);
      if (linkTo !== undefined) {
        (cell.links = new Set()).add(linkTo.self);
        (linkTo.links ??= new Set()).add(ref);
      }
      if (options.onStarted !== undefined) {
        cell.onStarted = options.onStarted;
        cell.startLink = options.link;
      }
    }
    if (this.observer !== undefined) this.runHook(() => this.observer!.spawned(cell));
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

  /** @internal The installed router of this node's other creations (placement), if any. */
  get router(): Router | undefined {
    return this.#router;
  }

  /**
   * @internal Installs (or, with undefined, removes) the route to another node: refs whose node is
   * `node` go to `router`, whatever their creation. The nodes layer holds one per connected node.
   */
  setNodeRoute(node: string, router: Router | undefined): void {
    if (node === this.node) throw new InvalidOption('node', 'this system is that node');
    if (router === undefined) this.#nodeRoutes?.delete(node);
    else (this.#nodeRoutes ??= new Map()).set(node, router);
  }

  /** @internal Installs the router for refs of nodes that have no route of their own; throws if one is installed. */
  setRemoteRouter(router: Router): void {
    if (this.#remoteRouter !== undefined) throw new InvalidOption('router', 'a remote router is already installed');
    this.#remoteRouter = router;
  }

  /**
   * @internal Where a ref with no local cell goes: undefined for this system's own refs (the actor
   * is gone) and when nothing routes it. Routing is by (node, creation): this node's other
   * creations go to placement; other nodes to their route, else the remote router. Without the
   * nodes layer a foreign node's ref falls back to placement (a host forwards it to its parent).
   */
  routeOf(ref: Ref): Router | undefined {
    if (ref.node === this.node) return ref.creation === this.creation ? undefined : this.#router;
    return this.#nodeRoutes?.get(ref.node) ?? this.#remoteRouter ?? this.#router;
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
    } else {
      this.routeOf(target)?.send(target, message);
    }
  }

  call<Reply = unknown>(target: Ref | string, request: unknown, timeoutMs?: number): Promise<Reply> {
    return this.callFrom(target, request, timeoutMs) as Promise<Reply>;
  }

  callFrom(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    if (this.#tracing) return this.#tracedCall(target, request, timeoutMs);
    return this.#call(target, request, timeoutMs);
  }

  /**
   * @internal A call served for another system (a host, a node): settled through `resolve` or
   * `reject`, with no promise in between, when the callee is a local actor and no span is recorded.
   */
  callFor(target: Ref, request: unknown, timeoutMs: number | undefined, resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
    const cell = this.#tracing ? undefined : this.#lookup(target);
    if (cell === undefined) this.callFrom(target, request, timeoutMs).then(resolve, reject);
    else this.#calls.openWith(cell, request, timeoutMs, resolve, reject);
  }

  /** A call inside a `molo.call` span, when the observer records one. */
  #tracedCall(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const span = this.observer!.startSpan!('molo.call', { 'molo.callee': target, 'molo.node': this.node });
    if (span === undefined) return this.#call(target, request, timeoutMs);
    let promise: Promise<unknown>;
    try {
      // Inside the span: a call that leaves this node carries it, so the callee's side is its child.
      promise = span.run === undefined ? this.#call(target, request, timeoutMs) : span.run(() => this.#call(target, request, timeoutMs));
    } catch (error) {
      span.end(error);
      throw error;
    }
    return endSpanWith(span, promise);
  }

  #call(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown> {
    const cell = this.#lookup(target);
    if (cell === undefined) return this.#calls.openElsewhere(this, target, request, timeoutMs);
    return this.#calls.open(cell, request, timeoutMs);
  }

  #lookup(target: Ref | string): ActorCell | undefined {
    return typeof target === 'string' ? this.#registry.cellOf(target) : this.cellOf(target);
  }

  /**
   * @internal The live local actor `ref` names, by value: the ref spawn returned routes straight to
   * its cell; any other object with the same parts (rebuilt from JSON, decoded from a frame) costs
   * one lookup by id. Every kernel operation resolves refs through here, so one identity has one
   * behaviour, as Erlang pids compare by value.
   */
  cellOf(ref: Ref): ActorCell | undefined {
    return (ref._cell as ActorCell | undefined) ?? this.#byId(ref);
  }

  /** A ref rebuilt from its parts (not the object spawn returned) still reaches a live local actor. */
  #byId(ref: Ref): ActorCell | undefined {
    return ref.creation === this.creation && ref.node === this.node ? this.#cells.get(ref.id) : undefined;
  }

  // ---- exits ------------------------------------------------------------------------------

  exit(target: Ref, reason: ExitReason): void {
    this.#signals.exitSignal(target, this.outside, reason);
  }

  /** OTP's exit/2: `kill` is untrappable; a trapping target gets a message; `normal` is ignored. */
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void {
    this.#signals.exitSignal(target, from, reason);
  }

  /**
   * @internal A linked actor elsewhere (another creation) exited: `target` drops the link and gets
   * the signal, as from a local link. Nothing happens if they are no longer linked.
   */
  linkExit(target: Ref, from: Ref, reason: ExitReason): void {
    this.#signals.linkExit(target, from, reason);
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

  /**
   * Everything an exited actor held is released, in this order: table entry, name, resources,
   * calls, the monitors it held, its links (each linked actor gets the signal) and its watchers
   * (each gets `DOWN`). The walk over links and monitors stays here rather than in signals.ts: in
   * one function V8 compiles the exit path as small pieces; split, it inlined all of it into
   * `exit` and each spawn-and-kill ran unoptimized for ~5× longer before that compile landed.
   */
  #finalize(cell: ActorCell): void {
    const reason = cell.exitReason!;
    const ref = cell.self;
    this.#cells.delete(ref.id);
    ref._cell = undefined;
    if (cell.name !== undefined) this.#registry.release(cell);
    cell.release(reason);
    if (cell.calls !== null) this.#calls.failAll(cell, reason);
    if (cell.monitoring !== null) {
      for (const [id, target] of cell.monitoring) {
        const other = this.cellOf(target);
        if (other !== undefined) other.monitoredBy?.delete(id);
        else this.routeOf(target)?.demonitor(target, id);
      }
      cell.monitoring = null;
    }
    if (cell.links !== null) {
      const links = cell.links;
      cell.links = null;
      for (const linked of links) {
        const other = this.cellOf(linked);
        if (other === undefined) {
          this.routeOf(linked)?.linkExited(linked, ref, reason);
          continue;
        }
        other.links?.delete(ref);
        this.#signals.linkSignal(other, ref, reason);
      }
    }
    if (cell.monitoredBy !== null) {
      const watchers = cell.monitoredBy;
      cell.monitoredBy = null;
      for (const [id, watcher] of watchers) this.#signals.notify(watcher, id, ref, reason);
    }
    if (this.observer !== undefined) this.runHook(() => this.observer!.exited(cell, reason));
    // With no observer to take it, a crash is still reported (OTP prints crash reports by default).
    else if (reason instanceof Error) this.runHook(() => logExit(this.logger, cell, reason));
  }

  /**
   * @internal Runs a hook (an observer, an exit watcher) inside the kernel's own work: one that
   * throws must not stop exit propagation or the run queue, so the failure is counted and logged.
   */
  runHook(hook: () => void): void {
    try {
      hook();
    } catch (error) {
      this.hookFailures++;
      this.logger.error({ err: error }, 'a kernel hook (observer or exit watcher) threw');
    }
  }

  // ---- links and monitors -------------------------------------------------------------------

  linkCells(cell: ActorCell, target: Ref): void {
    this.#signals.link(cell, target);
  }

  unlinkCells(cell: ActorCell, target: Ref): void {
    this.#signals.unlink(cell, target);
  }

  nextMonitorId(): number {
    return this.#signals.nextMonitorId();
  }

  addMonitor(watcher: Watcher, target: Ref): MonitorRef {
    return this.#signals.monitor(watcher, target);
  }

  removeMonitor(watcher: ActorCell, monitor: MonitorRef): void {
    this.#signals.demonitor(watcher, monitor);
  }

  /** Watches an actor from outside any actor: `callback` runs synchronously at its exit. */
  watch(target: Ref, callback: (reason: ExitReason, ref: Ref) => void): () => void {
    return this.#signals.watch(target, callback);
  }

  exited(target: Ref): Promise<ExitReason> {
    return new Promise((resolve) => this.#signals.monitor((reason) => resolve(reason), target));
  }

  // ---- registry -------------------------------------------------------------------------------

  register(name: string, target: Ref): void {
    const cell = this.cellOf(target);
    if (cell === undefined) throw new NoProc(target);
    this.#registry.register(name, cell);
  }

  registerCell(name: string, cell: ActorCell): void {
    this.#registry.register(name, cell);
  }

  unregister(name: string): boolean {
    return this.#registry.unregister(name);
  }

  whereis(name: string): Ref | undefined {
    return this.#registry.whereis(name);
  }

  registered(): string[] {
    return this.#registry.names();
  }

  // ---- introspection ----------------------------------------------------------------------------

  /** For an actor elsewhere (a placed actor, another node's): best effort, its host or node is up. */
  isAlive(target: Ref): boolean {
    if (this.cellOf(target) !== undefined) return true;
    return this.routeOf(target)?.isAlive(target) === true;
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
    this.#remoteRouter?.shutdown();
  }
}

import type { ActorBehaviour, ActorContext, ActorRuntime, Envelope, HandlerFunction, SpawnOptions } from './behaviour.js';
import { CellFlag } from './cell-flags.js';
import { ActorCrashed, CallingSelf, MailboxFull, NotInActor } from './errors.js';
import type { ExitReason } from './exit.js';
import { Mailbox, type ResolvedMailboxOptions } from './mailbox.js';
import { CallRequest, DownMessage, ExitMessage, type ReceiveTimeout } from './messages.js';
import { cancelOwnedTimers, cancelTimer, sendAfter } from './owned-timers.js';
import { actorStatus, DEFAULT_BEHAVIOUR_NAME, processInfo, type ActorStatus, type ProcessInfo } from './process-info.js';
import type { MonitorRef, Ref } from './ref.js';
import { dropReceive, offerToReceiver, selectiveReceive, type PendingReceive } from './selective-receive.js';
import type { TimerEntry, TimerService } from './timers.js';
import { silentLogger, type Logger } from '../telemetry/logger-api.js';

const { AWAITING, EXITED, INITIALIZED, INITIALIZING, RUNNING, SCHEDULED, STOPPING, TRAP_EXIT } = CellFlag;

/** What a cell needs from the system that hosts it. */
export interface KernelHost extends ActorRuntime {
  readonly timers: TimerService;
  /** Parent of every actor's `ctx.log`; undefined: actors log nowhere. */
  readonly logger: Logger | undefined;
  /** Puts a cell on the run queue (the cell has already marked itself scheduled). */
  enqueueRun(cell: ActorCell): void;
  /** Exits `cell` with `reason` now, without running `terminate`, and propagates. */
  terminateCell(cell: ActorCell, reason: ExitReason): void;
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void;
  linkCells(a: ActorCell, b: Ref): void;
  unlinkCells(a: ActorCell, b: Ref): void;
  addMonitor(watcher: ActorCell | ((reason: ExitReason, ref: Ref) => void), target: Ref): MonitorRef;
  removeMonitor(watcher: ActorCell, monitor: MonitorRef): void;
  nextMonitorId(): number;
  registerCell(name: string, cell: ActorCell): void;
  spawnChild<N>(parent: ActorCell, behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: SpawnOptions): Ref;
  callFrom(target: Ref | string, request: unknown, timeoutMs: number | undefined): Promise<unknown>;
}

/**
 * The kernel's per-actor record and the context handed to its callbacks: message intake and the
 * execution loop live here; selective receive, owned timers and process info are functions over
 * these fields in their own modules. Everything optional is created on first use: an idle actor
 * with no links, timers or messages holds only these fields.
 */
export class ActorCell<M = unknown> implements ActorContext<M> {
  flags = 0;
  mailbox: Mailbox<unknown> | null = null;
  handledCount = 0;
  droppedCount = 0;
  links: Set<Ref> | null = null;
  /** Monitors others hold on this actor: id → watcher (a cell, or a callback of the kernel's). */
  monitoredBy: Map<MonitorRef, ActorCell | ((reason: ExitReason, ref: Ref) => void)> | null = null;
  /** Monitors this actor holds: id → target. */
  monitoring: Map<MonitorRef, Ref> | null = null;
  timerSet: Set<TimerEntry> | null = null;
  abortController: AbortController | null = null;
  name: string | undefined = undefined;
  receiver: PendingReceive | null = null;
  /** Head of the intrusive list of calls waiting on this actor. */
  calls: CallRequest | null = null;
  stopReason: ExitReason | undefined = undefined;
  exitReason: ExitReason | undefined = undefined;
  onStarted: ((error: ExitReason | undefined) => void) | undefined = undefined;
  startLink: Ref | undefined = undefined;
  #log: Logger | undefined = undefined;

  constructor(
    readonly host: KernelHost,
    readonly self: Ref,
    readonly behaviour: ActorBehaviour<M>,
    readonly mailboxOptions: ResolvedMailboxOptions,
    readonly parent: Ref | undefined,
  ) {}

  // ---- message intake -------------------------------------------------------------------

  /** Enqueues a user message, applying capacity and overflow policy. */
  deliver(message: unknown): void {
    if (this.flags & EXITED) return;
    if (this.receiver !== null && offerToReceiver(this, message)) return;
    let mailbox = this.mailbox;
    if (mailbox === null) mailbox = this.mailbox = new Mailbox();
    else if (mailbox.length >= this.mailboxOptions.capacity) {
      const overflow = this.mailboxOptions.overflow;
      if (overflow === 'reject') throw new MailboxFull(this.self, this.mailboxOptions.capacity);
      this.droppedCount++;
      if (overflow === 'drop-newest') return this.#dropped(message);
      // drop-oldest drops the oldest user message: a queued EXIT or DOWN is never dropped.
      const oldest = mailbox.findIndex(isUserMessage);
      if (oldest < 0) return this.#dropped(message);
      this.#dropped(oldest === 0 ? mailbox.shift() : mailbox.removeAt(oldest));
    }
    mailbox.push(message);
    if ((this.flags & SCHEDULED) === 0) {
      this.flags |= SCHEDULED;
      this.host.enqueueRun(this);
    }
  }

  /** A dropped call fails at once with MailboxFull rather than leaving its caller to time out. */
  #dropped(message: unknown): void {
    if (message instanceof CallRequest) message._settle?.(message, false, new MailboxFull(this.self, this.mailboxOptions.capacity));
  }

  /** Enqueues a kernel signal (EXIT, DOWN): never refused, never dropped by overflow policy. */
  deliverSignal(message: unknown): void {
    if (this.flags & EXITED) return;
    if (this.receiver !== null && offerToReceiver(this, message)) return;
    (this.mailbox ??= new Mailbox()).push(message);
    if ((this.flags & SCHEDULED) === 0) {
      this.flags |= SCHEDULED;
      this.host.enqueueRun(this);
    }
  }

  // ---- execution --------------------------------------------------------------------------

  /**
   * Runs up to `budget` callbacks synchronously. Returns how many ran. Leaves SCHEDULED set when
   * more work remains (the run queue requeues it), or when an async callback is in flight.
   */
  run(budget: number): number {
    if ((this.flags & INITIALIZED) === 0) {
      this.flags |= INITIALIZED | INITIALIZING;
      this.#invoke(true, undefined);
      return 1;
    }
    let ran = 0;
    while (ran < budget) {
      if (this.stopReason !== undefined) {
        this.#beginStop(this.stopReason);
        return ran;
      }
      const mailbox = this.mailbox;
      if (mailbox === null || mailbox.length === 0) {
        this.flags &= ~SCHEDULED;
        return ran;
      }
      const message = mailbox.shift();
      ran++;
      this.handledCount++;
      if (!this.#invoke(false, message)) return ran;
    }
    return ran;
  }

  /** Calls `init` or `handle`; returns true when the loop may continue synchronously. */
  #invoke(isInit: boolean, message: unknown): boolean {
    let result: void | PromiseLike<void>;
    this.flags |= RUNNING;
    try {
      result = isInit ? this.behaviour.init?.(this) : this.behaviour.handle(this, message as Envelope<M>);
    } catch (error) {
      this.flags &= ~RUNNING;
      this.#crash(error);
      return false;
    }
    this.flags &= ~RUNNING;
    if (this.flags & EXITED) return false;
    if (result !== undefined && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
      this.flags |= AWAITING;
      (result as PromiseLike<void>).then(
        () => this.#resume(),
        (error: unknown) => this.#crash(error),
      );
      return false;
    }
    if (isInit) {
      this.flags &= ~INITIALIZING;
      this.#started();
    }
    return true;
  }

  #resume(): void {
    this.flags &= ~(AWAITING | INITIALIZING);
    if (this.flags & EXITED) return;
    if (this.flags & STOPPING) return;
    if ((this.flags & INITIALIZED) !== 0 && this.onStarted !== undefined) this.#started();
    if (this.stopReason !== undefined || (this.mailbox !== null && this.mailbox.length > 0)) {
      this.host.enqueueRun(this);
    } else {
      this.flags &= ~SCHEDULED;
    }
  }

  #started(): void {
    const onStarted = this.onStarted;
    // An init that asked to stop has failed: #failStart reports it once the stop begins.
    if (onStarted === undefined || this.stopReason !== undefined) return;
    this.onStarted = undefined;
    this.startLink = undefined;
    onStarted(undefined);
  }

  #crash(thrown: unknown): void {
    this.flags &= ~AWAITING;
    if (this.flags & EXITED) return;
    const reason = crashReason(thrown);
    if (this.flags & STOPPING) {
      // terminate itself failed: its failure is the exit reason, as OTP's gen_server re-raises it.
      this.host.terminateCell(this, reason);
      return;
    }
    this.#beginStop(reason);
  }

  /** Runs `terminate` (if any), then exits. */
  #beginStop(reason: ExitReason): void {
    this.stopReason = reason;
    this.flags |= STOPPING;
    this.#failStart(reason);
    const terminate = this.behaviour.terminate;
    if (terminate === undefined) {
      this.host.terminateCell(this, reason);
      return;
    }
    let result: void | PromiseLike<void>;
    // RUNNING lets terminate use the context (selective receive, say) like any callback.
    this.flags |= RUNNING;
    try {
      result = terminate.call(this.behaviour, this, reason);
    } catch (error) {
      // A terminate that fails replaces the reason (OTP: the exception terminate raised).
      this.flags &= ~RUNNING;
      this.host.terminateCell(this, crashReason(error));
      return;
    }
    this.flags &= ~RUNNING;
    if (result !== undefined && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
      this.flags |= AWAITING;
      (result as PromiseLike<void>).then(
        () => this.host.terminateCell(this, reason),
        (error: unknown) => this.host.terminateCell(this, crashReason(error)),
      );
      return;
    }
    this.host.terminateCell(this, reason);
  }

  /** An init that fails reports to its starter and unlinks from it, so the starter sees no EXIT. */
  #failStart(reason: ExitReason): void {
    const onStarted = this.onStarted;
    if (onStarted === undefined) return;
    this.onStarted = undefined;
    if (this.startLink !== undefined) this.host.unlinkCells(this, this.startLink);
    this.startLink = undefined;
    onStarted(reason);
  }

  /** Called by the kernel at exit: releases every owned resource. */
  release(reason: ExitReason): void {
    if (this.onStarted !== undefined) this.#failStart(reason);
    cancelOwnedTimers(this);
    dropReceive(this);
    this.abortController?.abort(reason);
    this.mailbox = null;
  }

  // ---- ActorContext ----------------------------------------------------------------------

  /** This actor's logger: a child of the system's, bound with its ref, name and behaviour; made on first use. */
  get log(): Logger {
    return (this.#log ??=
      this.host.logger === undefined
        ? silentLogger
        : this.host.logger.child({
            actor: this.self.toString(),
            name: this.name,
            behaviour: this.behaviour.name ?? DEFAULT_BEHAVIOUR_NAME,
          }));
  }

  get system(): ActorRuntime {
    return this.host;
  }

  get signal(): AbortSignal {
    if (this.abortController === null) {
      this.abortController = new AbortController();
      // First read after exit (a handler that outlived its actor): already aborted, as it would have been.
      if (this.flags & EXITED) this.abortController.abort(this.exitReason);
    }
    return this.abortController.signal;
  }

  get trapsExit(): boolean {
    return (this.flags & TRAP_EXIT) !== 0;
  }

  send(target: Ref | string, message: unknown): void {
    this.host.send(target, message);
  }

  call<Reply = unknown>(target: Ref | string, request: unknown, timeoutMs?: number): Promise<Reply> {
    // OTP's calling_self: no reply could ever come, so fail now rather than at the timeout.
    if (typeof target === 'string' ? target === this.name : target.equals(this.self)) {
      return Promise.reject(new CallingSelf(target));
    }
    return this.host.callFrom(target, request, timeoutMs) as Promise<Reply>;
  }

  spawn<N>(behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: SpawnOptions): Ref {
    return this.host.spawnChild(this, behaviour, options);
  }

  spawnLink<N>(behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: Omit<SpawnOptions, 'link'>): Ref {
    return this.host.spawnChild(this, behaviour, { ...options, link: this.self });
  }

  link(target: Ref): void {
    this.host.linkCells(this, target);
  }

  unlink(target: Ref): void {
    this.host.unlinkCells(this, target);
  }

  monitor(target: Ref): MonitorRef {
    return this.host.addMonitor(this, target);
  }

  demonitor(monitor: MonitorRef, flush = false): void {
    this.host.removeMonitor(this, monitor);
    if (flush && this.mailbox !== null) {
      const index = this.mailbox.findIndex((m) => m instanceof DownMessage && m.monitor === monitor);
      if (index >= 0) this.mailbox.removeAt(index);
    }
  }

  trapExit(on: boolean): void {
    if (on) this.flags |= TRAP_EXIT;
    else this.flags &= ~TRAP_EXIT;
  }

  exit(target: Ref, reason: ExitReason): void {
    this.host.exitSignal(target, this.self, reason);
  }

  stop(reason: ExitReason = 'normal'): void {
    if (this.flags & (EXITED | STOPPING)) return;
    this.stopReason ??= reason;
    if ((this.flags & (RUNNING | AWAITING | SCHEDULED)) === 0) {
      this.flags |= SCHEDULED;
      this.host.enqueueRun(this);
    }
  }

  receive(predicate: (message: Envelope<M>) => boolean, timeoutMs?: number): Promise<Envelope<M> | ReceiveTimeout> {
    return selectiveReceive(this, predicate as (message: unknown) => boolean, timeoutMs) as Promise<Envelope<M> | ReceiveTimeout>;
  }

  sendAfter(delayMs: number, message: unknown, target: Ref = this.self): TimerEntry {
    return sendAfter(this, delayMs, message, target);
  }

  cancelTimer(timer: TimerEntry): boolean {
    return cancelTimer(this, timer);
  }

  register(name: string): void {
    this.host.registerCell(name, this);
  }

  now(): number {
    return this.host.clock.now();
  }

  // ---- introspection ---------------------------------------------------------------------

  get status(): ActorStatus {
    return actorStatus(this.flags);
  }

  info(): ProcessInfo {
    return processInfo(this);
  }
}

/** What a thrown value becomes as an exit reason: Errors as they are, anything else wrapped. */
function crashReason(thrown: unknown): ExitReason {
  return thrown instanceof Error ? thrown : new ActorCrashed(thrown);
}

function isUserMessage(message: unknown): boolean {
  return !(message instanceof ExitMessage || message instanceof DownMessage);
}

/** Adapts a plain function to a behaviour. */
export function toBehaviour<M>(behaviour: ActorBehaviour<M> | HandlerFunction<M>): ActorBehaviour<M> {
  if (typeof behaviour !== 'function') return behaviour;
  return { name: behaviour.name || DEFAULT_BEHAVIOUR_NAME, handle: (ctx, message) => behaviour(message, ctx) };
}

export function notInActor(operation: string): never {
  throw new NotInActor(operation);
}

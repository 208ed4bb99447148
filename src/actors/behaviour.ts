import type { ExitReason } from './exit.js';
import type { MailboxOptions } from './mailbox.js';
import type { CallRequest, ReceiveTimeout, SystemMessage } from './messages.js';
import type { MonitorRef, Ref } from './ref.js';
import type { TimerEntry } from './timers.js';
import type { Clock } from './clock.js';
import type { KernelObserver } from './observer.js';
import type { ActorStatus, ProcessInfo } from './process-info.js';
import type { Logger } from '../telemetry/logger-api.js';
import type { BehaviourModule, PlacedSpawnOptions } from './placement/types.js';

/** Anything an actor may be handed: its own messages or the kernel's. */
export type Envelope<M> = M | SystemMessage;

/**
 * Actor logic: pure callbacks that the kernel runs one message at a time. A callback may return a
 * promise; the next message waits until it settles. A callback that throws (or rejects) exits the
 * actor with that error.
 */
export interface ActorBehaviour<M = unknown> {
  /** Shown in process info; defaults to `actor`. */
  readonly name?: string;
  init?(ctx: ActorContext<M>): void | PromiseLike<void>;
  handle(ctx: ActorContext<M>, message: Envelope<M>): void | PromiseLike<void>;
  /** Runs when the actor stops itself or crashes; not when it is killed by a signal (as in OTP). */
  terminate?(ctx: ActorContext<M>, reason: ExitReason): void | PromiseLike<void>;
}

export type HandlerFunction<M> = (message: Envelope<M>, ctx: ActorContext<M>) => void | PromiseLike<void>;

export interface SpawnOptions {
  /** Registers the actor under this name before it runs. */
  readonly name?: string;
  /** Links the new actor to this one atomically at spawn. */
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
  readonly trapExit?: boolean;
  /** @internal called once init settles; on failure the link to `link` is removed first. */
  readonly onStarted?: (error: ExitReason | undefined) => void;
  /** @internal the actor's parent when it is not the spawner (a placed actor: its `link`). */
  readonly parent?: Ref;
}

/** What a handler may do; the kernel passes it to every callback. */
export interface ActorContext<M = unknown> {
  readonly self: Ref;
  readonly system: ActorRuntime;
  readonly parent: Ref | undefined;
  /**
   * This actor's logger: a child of the system's `logger` bound with `actor` (ref), `name` and
   * `behaviour`, made on first use; silent when the system has none.
   */
  readonly log: Logger;
  /** Aborted when the actor exits, so pending I/O can stop; created on first use. */
  readonly signal: AbortSignal;
  send(target: Ref | string, message: unknown): void;
  call<Reply = unknown>(target: Ref | string, request: unknown, timeoutMs?: number): Promise<Reply>;
  spawn<N>(behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: SpawnOptions): Ref;
  spawnLink<N>(behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: Omit<SpawnOptions, 'link'>): Ref;
  link(target: Ref): void;
  unlink(target: Ref): void;
  monitor(target: Ref): MonitorRef;
  /** Removes the monitor; with `flush`, also drops its `DOWN` message if one is queued. */
  demonitor(monitor: MonitorRef, flush?: boolean): void;
  trapExit(on: boolean): void;
  readonly trapsExit: boolean;
  /** Sends an exit signal to `target` (to itself too, as OTP's exit/2). */
  exit(target: Ref, reason: ExitReason): void;
  /** Stops this actor once the current callback returns; `terminate` then runs. */
  stop(reason?: ExitReason): void;
  /**
   * Selective receive: resolves with the first queued or arriving message that matches, leaving all
   * others in order; resolves with RECEIVE_TIMEOUT after `timeoutMs`. Only from the actor's own
   * (async) callback.
   */
  receive<T extends Envelope<M>>(
    predicate: (message: Envelope<M>) => message is T,
    timeoutMs?: number,
  ): Promise<T | ReceiveTimeout>;
  receive(predicate: (message: Envelope<M>) => boolean, timeoutMs?: number): Promise<Envelope<M> | ReceiveTimeout>;
  /** Sends `message` to `target` (default: itself) after `delayMs`; cancelled at exit. */
  sendAfter(delayMs: number, message: unknown, target?: Ref): TimerEntry;
  cancelTimer(timer: TimerEntry): boolean;
  register(name: string): void;
  now(): number;
}

/** The system-wide operations, usable from inside or outside actors; `ActorSystem` implements it. */
export interface ActorRuntime {
  readonly node: string;
  readonly creation: number;
  readonly clock: Clock;
  readonly observer: KernelObserver | undefined;
  spawn<N>(behaviour: ActorBehaviour<N> | HandlerFunction<N>, options?: SpawnOptions): Ref;
  /** Spawns an actor from a module, on this loop, in a worker thread or in a child process; resolves after its init. */
  spawnPlaced(behaviour: BehaviourModule, options?: PlacedSpawnOptions): Promise<Ref>;
  send(target: Ref | string, message: unknown): void;
  call<Reply = unknown>(target: Ref | string, request: unknown, timeoutMs?: number): Promise<Reply>;
  exit(target: Ref, reason: ExitReason): void;
  register(name: string, target: Ref): void;
  unregister(name: string): boolean;
  whereis(name: string): Ref | undefined;
  isAlive(target: Ref): boolean;
  info(target: Ref): ProcessInfo | undefined;
  /** Resolves with the actor's exit reason once it exits (`noproc` if it is not alive). */
  exited(target: Ref): Promise<ExitReason>;
}

export type { ActorStatus, CallRequest, ProcessInfo };

import {
  type ActorBehaviour,
  type ActorContext,
  type ActorRuntime,
  type CallRequest,
  type DownMessage,
  type ExitMessage,
  type ExitReason,
  type MailboxOptions,
  type MonitorRef,
  type Ref,
} from '../actors/index.js';
import { PlacementFailed } from '../actors/errors.js';
import type { BehaviourModule } from '../actors/placement/behaviour-module.js';
import type { PlacedSpawnOptions } from '../actors/placement/hub.js';
import type { ActorSystem } from '../actors/system.js';
import { StartFailed, StartIgnored } from './errors.js';
import { CastEnvelope, type GenServerTimeout, type NoReply } from './gen-server-messages.js';
import type { GenServerCallbacks } from './gen-server-callbacks.js';
import { GenServerRunner } from './gen-server-runner.js';
import { checkTimeoutOrInfinity, startActor } from './start-actor.js';
import { requestStop } from './stop-request.js';

export { NO_REPLY, TIMEOUT, type GenServerTimeout, type NoReply } from './gen-server-messages.js';

/** A ref that remembers which server it points at, so `call` and `cast` are typed. */
export type ServerRef<S> = Ref & { readonly __server?: S };

export type CallOf<S> = S extends GenServer<infer C, unknown, unknown, unknown, unknown> ? C : never;
export type ReplyOf<S> = S extends GenServer<never, infer R, unknown, unknown, unknown> ? R : unknown;
export type CastOf<S> = S extends GenServer<never, unknown, infer C, unknown, unknown> ? C : never;
/** What `call` accepts: the server's request type, or anything when the server type is unknown. */
export type RequestFor<S> = unknown extends S ? unknown : CallOf<S>;
export type ReplyFor<S> = unknown extends S ? unknown : ReplyOf<S>;
export type CastFor<S> = unknown extends S ? unknown : CastOf<S>;

/** The reply handle a server may keep to answer later, from another callback. */
export type From<Reply> = CallRequest<unknown, Reply>;

export interface GenServerStartOptions {
  readonly name?: string;
  /** Linked at spawn; an EXIT from it makes a trapping server run `terminate` and stop. */
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
  readonly trapExit?: boolean;
  /**
   * OTP's start option `{timeout, T}`: if init has not completed within this many ms, the server is
   * killed (its starter, unlinked first, sees no EXIT) and the start fails with reason `timeout`.
   * Default: no limit (OTP's infinity).
   */
  readonly timeoutMs?: number;
}

/** What `GenServer.startMonitor` resolves with: the server and the caller's monitor on it (OTP's `{Pid, Mon}`). */
export interface StartedAndMonitored<S> {
  readonly ref: ServerRef<S>;
  readonly monitor: MonitorRef;
}


/** Options of `GenServer.startPlaced`: where the server runs, plus the usual start options. */
export type GenServerPlacedOptions = GenServerStartOptions & Pick<PlacedSpawnOptions, 'placement' | 'host' | 'ownModulesOnly'>;


/**
 * OTP's gen_server as a class: state lives in fields, each callback handles one message, and the
 * return value of `handleCall` is the reply. A fresh instance is made for every (re)start.
 *
 * ```ts
 * class Counter extends GenServer<{ add: number } | 'get', number> {
 *   count = 0;
 *   handleCall(request: { add: number } | 'get') {
 *     if (request !== 'get') this.count += request.add;
 *     return this.count;
 *   }
 * }
 * ```
 */
export abstract class GenServer<Call = never, Reply = unknown, Cast = never, Info = unknown, Continue = never>
  implements GenServerCallbacks<Call, Reply, Cast, Info, Continue>
{
  /** The actor's context; set before `init`. */
  ctx!: ActorContext;
  /** @internal continue step requested by the running callback */
  _continue: { readonly arg: Continue } | undefined;
  /** @internal timeout requested by the running callback */
  _timeout: number | undefined;
  /** @internal set by `ignore()` from init */
  _ignored = false;

  get self(): ServerRef<this> {
    return this.ctx.self;
  }

  init?(): void | PromiseLike<void>;
  handleCall?(request: Call, from: From<Reply>): Reply | NoReply | PromiseLike<Reply | NoReply>;
  handleCast?(message: Cast): void | PromiseLike<void>;
  /** Other messages; also OTP's `timeout` ({@link TIMEOUT}) after `timeoutAfter`. Absent: logged and dropped. */
  handleInfo?(message: Info | ExitMessage | DownMessage | GenServerTimeout): void | PromiseLike<void>;
  handleContinue?(arg: Continue): void | PromiseLike<void>;
  terminate?(reason: ExitReason): void | PromiseLike<void>;

  /**
   * Runs `handleContinue(arg)` right after the current callback, before any queued message. From
   * `init`, the start is acknowledged first (the starter does not wait for the step), as in OTP.
   */
  protected continueWith(arg: Continue): void {
    this._continue = { arg };
  }

  /**
   * OTP's `Timeout` in a callback result (`{noreply, State, Timeout}`): if no message arrives within
   * `ms` after this callback (and its continue steps) settle, `handleInfo(TIMEOUT)` runs. Any message
   * cancels it; `Infinity` asks for none. Works from `init` and every handler.
   */
  protected timeoutAfter(ms: number): void {
    this._timeout = checkTimeoutOrInfinity('timeoutAfter', ms);
  }

  /**
   * OTP's `hibernate` in a callback result. A JavaScript actor has no heap of its own to compact, so
   * this only cancels a `timeoutAfter` asked for in the same callback, as OTP's hibernate (which
   * has no timeout) does; it is accepted so ported code keeps its shape.
   */
  protected hibernate(): void {
    this._timeout = undefined;
  }

  /**
   * OTP's `ignore` from `init`: the server does not start and exits `normal` without `terminate`.
   * Under a supervisor the child is recorded as not started (as OTP does); a direct
   * `GenServer.start` rejects with `StartIgnored`, so its result stays a ref.
   */
  protected ignore(): void {
    this._ignored = true;
  }

  /** Stops the server once the current callback returns; `terminate` runs with `reason` (any value). */
  protected stop(reason: ExitReason = 'normal'): void {
    this.ctx.stop(reason);
  }

  /**
   * Starts a server; resolves once its `init` has completed, rejects with StartFailed once the
   * server has exited if init failed (or, with `timeoutMs`, took too long: reason `timeout`).
   */
  static start<S extends GenServer<never, unknown, unknown, unknown, unknown>>(
    system: ActorRuntime,
    create: () => S,
    options: GenServerStartOptions = {},
  ): Promise<ServerRef<S>> {
    const runner = new GenServerRunner(create, options.link);
    return startActor(system, runner, options, {
      timeoutMs: options.timeoutMs,
      // Reported before terminate would run: a server whose init failed never terminates (OTP).
      settled: (error) => void (runner.initialized = error === undefined),
      ignored: () => runner.ignored,
    }).then((ref) => {
      if (ref === undefined) throw new StartIgnored(runner.name);
      return ref as ServerRef<S>;
    });
  }

  /**
   * OTP's start_monitor: starts a server and monitors it from `ctx`'s actor atomically (the monitor
   * is in place before the server can run). If the start fails, its DOWN message is removed from
   * the mailbox before the StartFailed rejection, as OTP does.
   */
  static startMonitor<S extends GenServer<never, unknown, unknown, unknown, unknown>>(
    ctx: ActorContext,
    create: () => S,
    options: GenServerStartOptions = {},
  ): Promise<StartedAndMonitored<S>> {
    const runner = new GenServerRunner(create, options.link);
    let monitor: MonitorRef | undefined;
    return startActor(ctx.system, runner, options, {
      timeoutMs: options.timeoutMs,
      spawned: (ref) => void (monitor = ctx.monitor(ref)),
      settled: (error) => void (runner.initialized = error === undefined),
      ignored: () => runner.ignored,
      cleanup: () => ctx.demonitor(monitor!, true),
    }).then((ref) => {
      if (ref === undefined) throw new StartIgnored(runner.name);
      return { ref: ref as ServerRef<S>, monitor: monitor! };
    });
  }

  /**
   * The server as an ActorBehaviour, for a module export that `GenServer.startPlaced` (or
   * `spawnPlaced`) names: `export const counter = (start: number) => GenServer.behaviour(() => new Counter(start))`.
   * Export a function that returns it: the behaviour holds its server, so each actor needs its own.
   */
  static behaviour<S extends GenServer<never, unknown, unknown, unknown, unknown>>(create: () => S): ActorBehaviour<unknown> {
    return new GenServerRunner(create, undefined, true);
  }

  /**
   * Starts a server whose behaviour a module exports (see {@link GenServer.behaviour}), in a worker
   * thread, a child process or this loop (`placement`). Resolves once its init completed; rejects
   * with StartFailed if init failed or the host could not run it. Typed calls work on the ref as usual.
   */
  static startPlaced<S extends GenServer<never, unknown, unknown, unknown, unknown>>(
    system: Pick<ActorSystem, 'spawnPlaced'>,
    behaviour: BehaviourModule<S>,
    options: GenServerPlacedOptions = {},
  ): Promise<ServerRef<S>> {
    return system.spawnPlaced(behaviour, options).then(
      (ref) => ref as ServerRef<S>,
      (error: unknown) => {
        throw error instanceof PlacementFailed ? new StartFailed(error.reason) : error;
      },
    );
  }

  static call<S = unknown>(
    system: ActorRuntime,
    server: ServerRef<S> | string,
    request: RequestFor<NoInfer<S>>,
    timeoutMs?: number,
  ): Promise<ReplyFor<S>> {
    return system.call<ReplyFor<S>>(server, request, timeoutMs);
  }

  static cast<S = unknown>(system: ActorRuntime, server: ServerRef<S> | string, message: CastFor<NoInfer<S>>): void {
    system.send(server, new CastEnvelope(message));
  }

  /** Replies to a call whose `handleCall` returned NO_REPLY. */
  static reply<Reply>(from: From<Reply>, value: Reply): void {
    from.reply(value);
  }

  /**
   * OTP's gen_server:stop: the server runs `terminate(reason)` and exits; resolves with its exit
   * reason (the terminate's error if terminate failed). With `timeoutMs`, rejects with StopTimeout
   * if it has not exited by then (the server keeps running, as in OTP).
   */
  static stop(system: ActorRuntime, server: Ref | string, reason: ExitReason = 'normal', timeoutMs?: number): Promise<ExitReason> {
    return requestStop(system, server, reason, timeoutMs);
  }
}

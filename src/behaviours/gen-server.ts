import {
  CallRequest,
  ExitMessage,
  type ActorBehaviour,
  type ActorContext,
  type ActorRuntime,
  type DownMessage,
  type Envelope,
  type ExitReason,
  type MailboxOptions,
  type Ref,
} from '../actors/index.js';
import { PlacementFailed } from '../actors/errors.js';
import type { BehaviourModule } from '../actors/placement/behaviour-module.js';
import type { PlacedSpawnOptions } from '../actors/placement/hub.js';
import { registerWireClass } from '../actors/placement/wire-classes.js';
import type { ActorSystem } from '../actors/system.js';
import { StartFailed } from './errors.js';
import { requestStop, StopRequest } from './stop-request.js';

/** Returned by `handleCall` when the reply will be sent later with `GenServer.reply(from, value)`. */
export const NO_REPLY = new (class NoReply {
  readonly noReply = true as const;
})();
/** An object, not a symbol, so that `return NO_REPLY` in an unannotated method keeps its type. */
export type NoReply = typeof NO_REPLY;

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
}

class CastEnvelope {
  constructor(readonly message: unknown) {}
}
// A cast to a server in a thread or process arrives as a cast.
registerWireClass({
  Class: CastEnvelope,
  type: 0x50,
  write: (envelope) => [envelope.message],
  read: (data) => new CastEnvelope((data as unknown[])[0]),
});

/** Options of `GenServer.startPlaced`: where the server runs, plus the usual start options. */
export type GenServerPlacedOptions = GenServerStartOptions & Pick<PlacedSpawnOptions, 'placement' | 'host'>;

/** Wakes a server whose init asked to continue and whose mailbox was empty. */
const INIT_CONTINUE: unique symbol = Symbol('molo.init-continue');

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
export abstract class GenServer<Call = never, Reply = unknown, Cast = never, Info = unknown, Continue = never> {
  /** The actor's context; set before `init`. */
  ctx!: ActorContext;
  /** @internal continue step requested by the running callback */
  _continue: { readonly arg: Continue } | undefined;

  get self(): ServerRef<this> {
    return this.ctx.self;
  }

  init?(): void | PromiseLike<void>;
  handleCall?(request: Call, from: From<Reply>): Reply | NoReply | PromiseLike<Reply | NoReply>;
  handleCast?(message: Cast): void | PromiseLike<void>;
  handleInfo?(message: Info | ExitMessage | DownMessage): void | PromiseLike<void>;
  handleContinue?(arg: Continue): void | PromiseLike<void>;
  terminate?(reason: ExitReason): void | PromiseLike<void>;

  /**
   * Runs `handleContinue(arg)` right after the current callback, before any queued message. From
   * `init`, the start is acknowledged first (the starter does not wait for the step), as in OTP.
   */
  protected continueWith(arg: Continue): void {
    this._continue = { arg };
  }

  /** Stops the server once the current callback returns; `terminate` runs with `reason`. */
  protected stop(reason: ExitReason = 'normal'): void {
    this.ctx.stop(reason);
  }

  /** Starts a server; resolves once its `init` has completed, rejects with StartFailed if it failed. */
  static start<S extends GenServer<never, unknown, unknown, unknown, unknown>>(
    system: ActorRuntime,
    create: () => S,
    options: GenServerStartOptions = {},
  ): Promise<ServerRef<S>> {
    return new Promise((resolve, reject) => {
      const runner = new GenServerRunner(create, options.link);
      // Spelled out rather than spread: every spread-plus-property object gets its own hidden
      // class, which made each spawn miss the kernel's inline caches (measured: half the cost of
      // a 1,000-child group restart).
      const ref: Ref = system.spawn(runner, {
        name: options.name,
        link: options.link,
        mailbox: options.mailbox,
        trapExit: options.trapExit,
        onStarted: (error) => {
          // Reported before terminate would run: a server whose init failed never terminates (OTP).
          runner.initialized = error === undefined;
          if (error === undefined) resolve(ref);
          // Reported once the server has exited (OTP 26's proc_lib), so its name is free again.
          else void system.exited(ref).then(() => reject(new StartFailed(error)));
        },
      });
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

  /** OTP's gen_server:stop: the server runs `terminate(reason)` and exits; resolves with its exit reason. */
  static stop(system: ActorRuntime, server: Ref | string, reason: ExitReason = 'normal'): Promise<ExitReason> {
    return requestStop(system, server, reason);
  }
}

type AnyServer = GenServer<unknown, unknown, unknown, unknown, unknown>;

/** Runs a GenServer instance on the kernel. Callbacks that return synchronously stay synchronous. */
class GenServerRunner implements ActorBehaviour<unknown> {
  server: AnyServer | undefined;
  /** Set once init has succeeded; terminate runs only then, as OTP never terminates a failed init. */
  initialized = false;

  constructor(
    readonly create: () => GenServer<never, unknown, unknown, unknown, unknown>,
    public parent: Ref | undefined,
    /** Made by `GenServer.behaviour`: started by whoever spawns it, so it acknowledges its own init. */
    readonly placed = false,
  ) {}

  get name(): string {
    return this.server?.constructor.name ?? 'GenServer';
  }

  init(ctx: ActorContext): void | PromiseLike<void> {
    const server = this.create() as AnyServer;
    server.ctx = ctx;
    this.server = server;
    // A placed server's parent is the actor it was linked to at spawn.
    if (this.placed) this.parent ??= ctx.parent;
    // A continue step asked for by init runs after the start is acknowledged (OTP's
    // {ok, State, {continue, _}}), but before any message: see `handle`.
    const result = server.init?.();
    if (isThenable(result)) {
      return result.then(() => {
        if (this.placed) this.initialized = true;
        this.#wakeForContinue(ctx, server);
      });
    }
    if (this.placed) this.initialized = true;
    this.#wakeForContinue(ctx, server);
  }

  #wakeForContinue(ctx: ActorContext, server: AnyServer): void {
    if (server._continue === undefined) return;
    // With messages already queued, the first of them runs the step; otherwise a marker does.
    if ((ctx.system.info(ctx.self)?.mailboxLength ?? 0) === 0) ctx.send(ctx.self, INIT_CONTINUE);
  }

  handle(ctx: ActorContext, message: Envelope<unknown>): void | PromiseLike<void> {
    const server = this.server!;
    if (server._continue !== undefined) {
      // init's continue step, still pending: it goes before this message.
      const pending = this.#continue(server);
      if (isThenable(pending)) return pending.then(() => this.#dispatch(ctx, server, message));
    }
    return this.#dispatch(ctx, server, message);
  }

  #dispatch(ctx: ActorContext, server: AnyServer, message: Envelope<unknown>): void | PromiseLike<void> {
    if (message === INIT_CONTINUE) return;
    if (message instanceof CallRequest) {
      if (server.handleCall === undefined) throw new Error(`${this.name} has no handleCall for ${String(message.request)}`);
      const result = server.handleCall(message.request, message);
      if (isThenable(result)) {
        return result.then((reply) => {
          if (reply !== NO_REPLY) message.reply(reply);
          return this.#continue(server);
        });
      }
      if (result !== NO_REPLY) message.reply(result);
      return this.#continue(server);
    }
    if (message instanceof CastEnvelope) return this.#then(server.handleCast?.(message.message), server);
    if (message instanceof StopRequest) return ctx.stop(message.reason);
    if (message instanceof ExitMessage && this.parent !== undefined && message.from.equals(this.parent)) {
      // OTP: a server trapping exits stops with its parent's reason, running terminate.
      return ctx.stop(message.reason);
    }
    return this.#then(server.handleInfo?.(message), server);
  }

  terminate(_ctx: ActorContext, reason: ExitReason): void | PromiseLike<void> {
    if (!this.initialized) return;
    return this.server?.terminate?.(reason);
  }

  #then(result: void | PromiseLike<void>, server: AnyServer): void | PromiseLike<void> {
    if (isThenable(result)) return result.then(() => this.#continue(server));
    return this.#continue(server);
  }

  /** Drains continue steps; each may request another. */
  #continue(server: AnyServer): void | PromiseLike<void> {
    while (server._continue !== undefined) {
      const { arg } = server._continue;
      server._continue = undefined;
      if (server.handleContinue === undefined) throw new Error(`${this.name} asked to continue but has no handleContinue`);
      const result = server.handleContinue(arg);
      if (isThenable(result)) return result.then(() => this.#continue(server));
    }
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<T>).then === 'function';
}

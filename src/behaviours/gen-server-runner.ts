import { CallRequest, ExitMessage, type ActorBehaviour, type ActorContext, type Envelope, type ExitReason, type Ref } from '../actors/index.js';
import type { TimerEntry } from '../actors/timers.js';
import { UndefinedCallback } from './errors.js';
import { CastEnvelope, IdleTimeout, INIT_CONTINUE, NO_REPLY, TIMEOUT } from './gen-server-messages.js';
import type { GenServerCallbacks } from './gen-server-callbacks.js';
import { StopRequest } from './stop-request.js';

type AnyServer = GenServerCallbacks<unknown, unknown, unknown, unknown, unknown>;

/** Runs a GenServer instance on the kernel. Callbacks that return synchronously stay synchronous. */
export class GenServerRunner implements ActorBehaviour<unknown> {
  server: AnyServer | undefined;
  /** Set once init has succeeded; terminate runs only then, as OTP never terminates a failed init. */
  initialized = false;
  /** Set when init called `ignore()`: the start then resolves without a server. */
  ignored = false;
  /** The armed `timeoutAfter` timer and its message, until a message arrives or it fires. */
  #idle: { readonly entry: TimerEntry; readonly message: IdleTimeout } | undefined;

  constructor(
    readonly create: () => GenServerCallbacks<never, unknown, unknown, unknown, unknown>,
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
    if (isThenable(result)) return result.then(() => this.#initialized(ctx, server));
    this.#initialized(ctx, server);
  }

  #initialized(ctx: ActorContext, server: AnyServer): void {
    if (server._ignored) {
      // OTP's ignore: no server, no terminate; the actor exits normal and the start says so.
      this.ignored = true;
      ctx.stop('normal');
      return;
    }
    if (this.placed) this.initialized = true;
    this.#wakeForContinue(ctx, server);
    this.#armIdle(ctx, server);
  }

  #wakeForContinue(ctx: ActorContext, server: AnyServer): void {
    if (server._continue === undefined) return;
    // With messages already queued, the first of them runs the step; otherwise a marker does.
    if ((ctx.system.info(ctx.self)?.mailboxLength ?? 0) === 0) ctx.send(ctx.self, INIT_CONTINUE);
  }

  handle(ctx: ActorContext, message: Envelope<unknown>): void | PromiseLike<void> {
    const server = this.server!;
    if (message instanceof IdleTimeout) {
      // Stale: a message came first (which cancelled it) or another timeout replaced it.
      if (this.#idle?.message !== message) return;
      this.#idle = undefined;
      return this.#after(ctx, server, this.#then(this.#info(ctx, server, TIMEOUT), server));
    }
    if (this.#idle !== undefined) {
      // Any message cancels the timeout (OTP: the receive got something before `after`).
      ctx.cancelTimer(this.#idle.entry);
      this.#idle = undefined;
    }
    if (server._continue !== undefined) {
      // init's continue step, still pending: it goes before this message.
      const pending = this.#continue(server);
      if (isThenable(pending)) return pending.then(() => this.#after(ctx, server, this.#dispatch(ctx, server, message)));
    }
    return this.#after(ctx, server, this.#dispatch(ctx, server, message));
  }

  /** Once the callback (and its continue steps) settled: arms the timeout it asked for, if any. */
  #after(ctx: ActorContext, server: AnyServer, result: void | PromiseLike<void>): void | PromiseLike<void> {
    if (isThenable(result)) return result.then(() => this.#armIdle(ctx, server));
    this.#armIdle(ctx, server);
  }

  #armIdle(ctx: ActorContext, server: AnyServer): void {
    const timeoutMs = server._timeout;
    if (timeoutMs === undefined) return;
    server._timeout = undefined;
    if (timeoutMs === Infinity) return;
    const message = new IdleTimeout();
    this.#idle = { entry: ctx.sendAfter(timeoutMs, message), message };
  }

  #dispatch(ctx: ActorContext, server: AnyServer, message: Envelope<unknown>): void | PromiseLike<void> {
    if (message === INIT_CONTINUE) return;
    if (message instanceof CallRequest) {
      if (server.handleCall === undefined) throw new UndefinedCallback(this.name, 'handleCall');
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
    if (message instanceof CastEnvelope) {
      // OTP crashes a server without handle_cast with `undef`: a cast is never lost silently.
      if (server.handleCast === undefined) throw new UndefinedCallback(this.name, 'handleCast');
      return this.#then(server.handleCast(message.message), server);
    }
    if (message instanceof StopRequest) return ctx.stop(message.reason);
    if (message instanceof ExitMessage && this.parent !== undefined && message.from.equals(this.parent)) {
      // OTP: a server trapping exits stops with its parent's reason, running terminate.
      return ctx.stop(message.reason);
    }
    return this.#then(this.#info(ctx, server, message), server);
  }

  /** handleInfo, or OTP's warning for a server without it: logged and dropped, never a crash. */
  #info(ctx: ActorContext, server: AnyServer, message: unknown): void | PromiseLike<void> {
    if (server.handleInfo !== undefined) return server.handleInfo(message);
    ctx.log.warn({ server: this.name, message: describeMessage(message) }, 'undefined handleInfo: message dropped');
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
      if (server.handleContinue === undefined) throw new UndefinedCallback(this.name, 'handleContinue');
      const result = server.handleContinue(arg);
      if (isThenable(result)) return result.then(() => this.#continue(server));
    }
  }
}

function describeMessage(message: unknown): string {
  if (message === TIMEOUT) return 'timeout';
  if (typeof message === 'object' && message !== null) return message.constructor?.name ?? 'object';
  return typeof message === 'symbol' ? message.toString() : String(message);
}

export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<T>).then === 'function';
}

/**
 * The callbacks a GenServer offers its runner, as a type of their own: `GenServerRunner` drives any
 * object of this shape, and `GenServer` (which starts runners) implements it, so neither file
 * imports the other.
 */
import type { ActorContext, CallRequest, DownMessage, ExitMessage, ExitReason } from '../actors/index.js';
import type { GenServerTimeout, NoReply } from './gen-server-messages.js';

export interface GenServerCallbacks<Call = never, Reply = unknown, Cast = never, Info = unknown, Continue = never> {
  /** The actor's context; set by the runner before `init`. */
  ctx: ActorContext;
  /** @internal continue step requested by the running callback */
  _continue: { readonly arg: Continue } | undefined;
  /** @internal timeout requested by the running callback */
  _timeout: number | undefined;
  /** @internal set by `ignore()` from init */
  _ignored: boolean;
  init?(): void | PromiseLike<void>;
  handleCall?(request: Call, from: CallRequest<unknown, Reply>): Reply | NoReply | PromiseLike<Reply | NoReply>;
  handleCast?(message: Cast): void | PromiseLike<void>;
  handleInfo?(message: Info | ExitMessage | DownMessage | GenServerTimeout): void | PromiseLike<void>;
  handleContinue?(arg: Continue): void | PromiseLike<void>;
  terminate?(reason: ExitReason): void | PromiseLike<void>;
}

import { registerWireClass } from '../actors/placement/wire-classes.js';

/** Returned by `handleCall` when the reply will be sent later with `GenServer.reply(from, value)`. */
export const NO_REPLY = new (class NoReply {
  readonly noReply = true as const;
})();
/** An object, not a symbol, so that `return NO_REPLY` in an unannotated method keeps its type. */
export type NoReply = typeof NO_REPLY;

/**
 * What `handleInfo` receives when a timeout asked for with `timeoutAfter(ms)` passes with no other
 * message (OTP's `timeout` message after `{noreply, State, Timeout}`).
 */
export const TIMEOUT = new (class GenServerTimeout {
  readonly timeout = true as const;
})();
export type GenServerTimeout = typeof TIMEOUT;

/** A cast, as the server's mailbox holds it. */
export class CastEnvelope {
  constructor(readonly message: unknown) {}
}
// A cast to a server in a thread or process arrives as a cast.
registerWireClass({
  Class: CastEnvelope,
  type: 0x50,
  write: (envelope) => [envelope.message],
  read: (data) => new CastEnvelope((data as unknown[])[0]),
});

/** Wakes a server whose init asked to continue and whose mailbox was empty. */
export const INIT_CONTINUE: unique symbol = Symbol('molo.init-continue');

/** The timer message of one `timeoutAfter`: its identity tells a current timeout from a stale one. */
export class IdleTimeout {}

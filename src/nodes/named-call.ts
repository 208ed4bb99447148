/**
 * A call to the actor registered under a name on a peer node, as Erlang's
 * `gen_server:call({Name, Node}, Request)`: the request travels by name (so whichever actor holds
 * the name when it arrives answers it, a restarted one included), and the answer comes back to a
 * one-shot reply actor of the caller's node. Only actors that speak this protocol answer (the net
 * kernel); any other call by name resolves the name first (`Node.callNamed`).
 *
 * On the wire: `['$call', replyTo, tag, request]` by name, answered by `['$reply', tag, answer]`
 * sent to `replyTo`. The serving actor is attributed (peer-attribution.ts), so it knows the link a
 * call came on and answers only a `replyTo` of that link's node: a peer cannot have it answer
 * someone else.
 */
import { CallTimeout } from '../actors/errors.js';
import { MAX_TIMEOUT_MS } from '../actors/system-options.js';
import { Ref } from '../actors/ref.js';
import type { ActorSystem } from '../actors/system.js';
import { InvalidNodeOption, NodeDown } from './errors.js';
import type { FromPeer } from './peer-attribution.js';

const CALL = '$call';
const REPLY = '$reply';

/** What the caller needs of its node: a send by name over the link, and word of the link going down. */
export interface NamedCallRoute {
  sendNamed(message: unknown): void;
  /** Calls `listener` once the peer's link is down; returns a function that stops listening. */
  onDown(listener: () => void): () => void;
}

let lastTag = 0;

export function callByName(system: ActorSystem, node: string, name: string, request: unknown, timeoutMs: number, route: NamedCallRoute): Promise<unknown> {
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    return Promise.reject(new InvalidNodeOption('timeoutMs', `must be a number of ms ≥ 0 or Infinity, got ${String(timeoutMs)}`));
  }
  return new Promise<unknown>((resolve, reject) => {
    const tag = ++lastTag;
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) system.clock.clearTimer(timer);
      stopListening();
      if (system.isAlive(replyTo)) system.exit(replyTo, 'shutdown');
      settle();
    };
    // Anything else a peer sends this actor is dropped: only the answer with its tag settles the call.
    const replyTo = system.spawn((message: unknown) => {
      if (Array.isArray(message) && message.length === 3 && message[0] === REPLY && message[1] === tag) finish(() => resolve(message[2]));
    });
    // Infinity (OTP's infinity): no timer; the link going down still ends the call.
    const timer = Number.isFinite(timeoutMs) ? system.clock.setTimer(() => finish(() => reject(new CallTimeout(`${name}@${node}`, timeoutMs))), Math.min(timeoutMs, MAX_TIMEOUT_MS)) : undefined;
    const stopListening = route.onDown(() => finish(() => reject(new NodeDown(node, `name '${name}'`))));
    route.sendNamed([CALL, replyTo, tag, request]);
  });
}

/** A call by name from a peer, if well formed and answerable to an actor of the peer's own node. */
export function openNamedCall(message: FromPeer): { readonly request: unknown; answer(system: ActorSystem, value: unknown): void } | undefined {
  const call = message.message;
  if (!Array.isArray(call) || call.length !== 4 || call[0] !== CALL) return undefined;
  const [, replyTo, tag] = call as [string, unknown, unknown, unknown];
  if (!(replyTo instanceof Ref) || replyTo.node !== message.peer || typeof tag !== 'number') return undefined;
  return { request: call[3], answer: (system, value) => system.send(replyTo, [REPLY, tag, value]) };
}

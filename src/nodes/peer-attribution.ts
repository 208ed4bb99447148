/**
 * Attribution of peers' messages to the link they arrived on. The cluster services must know which
 * node a message came from, and a node named inside the message is whatever the sender chose: the
 * link is the only witness. So the local actors registered here (the services) receive whatever a
 * peer sends them (a send, a send by name, a call) wrapped in {@link FromPeer}, made by the link's
 * router with the link's node. FromPeer is not a wire class, so no peer can send one.
 */
import type { Ref } from '../actors/ref.js';

/** A message from a peer node to an attributed actor: `peer` is the node of the link it came on. */
export class FromPeer {
  constructor(
    readonly peer: string,
    readonly message: unknown,
  ) {}
}

/** This node's attributed actors (by id, of its main system). */
export class PeerAttribution {
  readonly #ids = new Set<number>();

  constructor(readonly system: { readonly node: string; readonly creation: number }) {}

  /** Messages peers send `ref` (an actor of this node's main system) arrive as FromPeer; returns a function that stops it. */
  add(ref: Ref): () => void {
    if (!this.#local(ref)) throw new TypeError('only actors of this node are attributed');
    this.#ids.add(ref.id);
    return () => void this.#ids.delete(ref.id);
  }

  covers(ref: Ref): boolean {
    return this.#local(ref) && this.#ids.has(ref.id);
  }

  #local(ref: Ref): boolean {
    return ref.node === this.system.node && ref.creation === this.system.creation;
  }
}

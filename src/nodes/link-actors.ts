/**
 * Each link's actor: a temporary child of the node's `node_links` supervisor (itself a child of
 * `molo.cluster_sup`), one per connected peer, with the peer's name as its id, so `/tree` shows
 * the node's links. Frames do not pass through its mailbox (the link's router works on the socket
 * directly, as Erlang's distribution controller hands frames to the runtime); the actor owns the
 * link's lifetime and answers `'status'` calls. Killed, it takes its link down (reason `killed`):
 * peers see `noconnection`, and the node dials again a peer it keeps connected, whose new link gets
 * a new actor. Closed, the link stops its actor.
 */
import { CallRequest } from '../actors/messages.js';
import type { Ref } from '../actors/ref.js';
import type { ActorSystem } from '../actors/system.js';
import { Supervisor } from '../behaviours/supervisor.js';
import type { ChildSpec } from '../behaviours/child-spec.js';
import type { NodeLink } from './link.js';

export const NODE_LINKS_ID = 'node_links';

/** What a link's actor answers to `'status'`. */
export interface LinkStatus {
  readonly node: string;
  readonly queuedBytes: number;
  readonly upAt: number;
}

/** The supervisor of the links: any number of temporary children, none restarted (the node redials instead). */
export function nodeLinksChild(system: ActorSystem): ChildSpec {
  return {
    id: NODE_LINKS_ID,
    type: 'supervisor',
    start: ({ parent }) => Supervisor.start(system, { strategy: 'one_for_one', intensity: 1, periodMs: 1_000, children: [] }, { link: parent }),
  };
}

export class LinkActors {
  #supervisor: Ref | undefined;
  readonly #actors = new WeakMap<NodeLink, Ref>();

  constructor(
    readonly system: ActorSystem,
    /** The node's supervisor, where `node_links` runs. */
    readonly services: Ref,
    /** True once the node stops: the shutdown's exits do not close links before it does. */
    readonly stopping: () => boolean,
  ) {}

  /** Gives `link` its actor (a moment later: the link serves meanwhile). */
  attach(link: NodeLink): void {
    void this.#start(link).catch((error: unknown) => {
      if (!this.stopping() && !link.isDown) this.system.logger.warn({ err: error, node: this.system.node, peer: link.peer }, 'nodes.link_actor_failed');
    });
  }

  async #start(link: NodeLink): Promise<void> {
    // Found again after a restart of node_links (its ref changes).
    if (this.#supervisor === undefined || !this.system.isAlive(this.#supervisor)) {
      this.#supervisor = (await Supervisor.whichChildren(this.system, this.services)).find((child) => child.id === NODE_LINKS_ID)?.ref as Ref | undefined;
    }
    if (this.#supervisor === undefined || link.isDown) return;
    const id = link.peer;
    await Supervisor.startChild(this.system, this.#supervisor, { id, restart: 'temporary', start: ({ parent }) => this.#spawn(link, parent) });
  }

  #spawn(link: NodeLink, parent: Ref): Ref | undefined {
    if (link.isDown) return undefined;
    const ref = this.system.spawn((message: unknown) => {
      if (message instanceof CallRequest && message.request === 'status') {
        message.reply({ node: link.peer, queuedBytes: link.queuedBytes, upAt: link.upAt } satisfies LinkStatus);
      }
    }, { link: parent });
    this.system.watch(ref, () => {
      if (!this.stopping()) link.close('killed');
    });
    this.#actors.set(link, ref);
    return ref;
  }

  /** The link is down: its actor stops (a temporary child, so it is not restarted). */
  detach(link: NodeLink): void {
    const ref = this.#actors.get(link);
    if (ref !== undefined && this.system.isAlive(ref)) this.system.exit(ref, 'shutdown');
  }
}

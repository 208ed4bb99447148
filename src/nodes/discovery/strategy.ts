/**
 * Discovery strategies in the spirit of Elixir's libcluster: each answers "which nodes are in the
 * cluster now" as node names (`name@host:port`). The discovery actor (discovery-server.ts) polls one,
 * connects the nodes that appear and lets go of the ones that vanish, so instances join and leave
 * a cluster without configuration changes.
 */
import { parseNodeName } from '../names.js';

export interface DiscoveryStrategy {
  /** Shown in the actor's status and logs (`static`, `dns`, `postgres`). */
  readonly kind: string;
  /** The node names the cluster has now (this node's own name may be among them). */
  list(): Promise<readonly string[]>;
  /** Called each round before `list` by strategies where a node registers itself. */
  announce?(self: string): Promise<void>;
  /** Called once when the discovery actor stops: the node leaves the registry at once, not at expiry. */
  withdraw?(self: string): Promise<void>;
}

/** Today's fixed seed list, as a strategy (validated once, here). */
export function staticNodes(nodes: readonly string[]): DiscoveryStrategy {
  const names = [...new Set(nodes)];
  for (const name of names) parseNodeName(name);
  return { kind: 'static', list: () => Promise.resolve(names) };
}

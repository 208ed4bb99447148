// `molo/nodes`: the node-to-node transport and distributed actors.
export { startNode, Node, NET_KERNEL_NAME, REMOTE_SPAWN_TIMEOUT_MS, type NodeEventMessage, type NodeStats } from './node.js';
export type { RemoteSpawnOptions, RemoteSpawnPolicy } from './remote-spawn.js';
export type { NodeOptions, NodeTlsOptions, FullPolicy } from './options.js';
export type { DownReason } from './link.js';
export { parseNodeName, type NodeAddress } from './names.js';
export { nodeMetrics, NodeMetrics } from './metrics.js';
export {
  NodeErrorCode,
  InvalidNodeName,
  InvalidNodeOption,
  HandshakeRefused,
  NodeFrameTooLarge,
  MalformedNodeFrame,
  UnknownRemoteActor,
  NodeLinkFull,
  NodeDown,
  NodeStopped,
  type RefusalReason,
} from './errors.js';

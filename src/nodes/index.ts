// `molo/nodes`: the node-to-node transport and distributed actors.
export { startNode, Node, CLUSTER_SERVICES_NAME, NET_KERNEL_NAME, REMOTE_SPAWN_TIMEOUT_MS, type NodeEventMessage, type NodeStats } from './node.js';
export type { RemoteSpawnOptions, RemoteSpawnPolicy } from './remote-spawn.js';
export type { NodeOptions, NodeTlsOptions, FullPolicy } from './options.js';
export type { DownReason } from './link.js';
export { nodeChild, type NodeChild } from './node-child.js';
export { NODE_LINKS_ID, type LinkStatus } from './link-actors.js';
export type { AutoConnectStats } from './auto-connect.js';
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
  NodeAutoConnectLimit,
  RemoteSpawnRefused,
  type RefusalReason,
  type SpawnRefusal,
} from './errors.js';
export { startGlobal, GlobalRegistry, GLOBAL_NAME, globalWinner, type GlobalOptions, type GlobalEntry, type GlobalStats, type GlobalNameConflict } from './global-registry.js';
export { startGroups, ProcessGroups, GROUPS_NAME, type GroupEvent, type GroupsOptions } from './groups.js';
export { startClusterTopics, ClusterTopics, TOPICS_NAME, type ClusterTopicStats } from './cluster-topics.js';
export { ClusterErrorCode, GlobalNameTaken, GlobalNameNotFound, InvalidClusterArgument, ClusterLimitReached } from './cluster-errors.js';
export { clusterMetrics, ClusterMetrics } from './cluster-metrics.js';
export * from './discovery/index.js';
export * from './bus/index.js';
export * from './rooms/index.js';
export * from './replication/index.js';

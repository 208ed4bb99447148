// The public API of Molo. Areas also have their own entries (`molo/actors`, `molo/behaviours`, `molo/nodes`).
export * from './actors/index.js';
export * from './behaviours/index.js';
export * from './admin/index.js';
export * from './telemetry/index.js';
export * from './data/index.js';
export * from './bus/index.js';
// `molo/nodes` names its entry `startNode`; here that name is the admin's application node, so the
// cluster node is exported under `startClusterNode` (and its options as `ClusterNodeOptions`).
export {
  startNode as startClusterNode,
  Node as ClusterNode,
  NET_KERNEL_NAME,
  CLUSTER_SERVICES_NAME,
  NODE_LINKS_ID,
  nodeChild as clusterNodeChild,
  REMOTE_SPAWN_TIMEOUT_MS,
  parseNodeName,
  nodeMetrics,
  NodeMetrics,
  type AutoConnectStats,
  type NodeOptions as ClusterNodeOptions,
  type NodeChild as ClusterNodeChild,
  type LinkStatus,
  type NodeEventMessage,
  type NodeStats,
  type NodeTlsOptions,
  type FullPolicy,
  type DownReason,
  type NodeAddress,
  type RemoteSpawnOptions,
  type RemoteSpawnPolicy,
} from './nodes/index.js';
// The nodes' error registry, whole (its names clash with nothing here).
export * from './nodes/errors.js';
export {
  startGlobal,
  GlobalRegistry,
  GLOBAL_NAME,
  startGroups,
  ProcessGroups,
  GROUPS_NAME,
  startClusterTopics,
  ClusterTopics,
  TOPICS_NAME,
  ClusterErrorCode,
  GlobalNameTaken,
  GlobalNameNotFound,
  InvalidClusterArgument,
  ClusterLimitReached,
  type GlobalOptions,
  type GlobalEntry,
  type GlobalNameConflict,
  type GroupEvent,
  type ClusterTopicStats,
} from './nodes/index.js';
export * from './nodes/discovery/index.js';
export * from './nodes/bus/index.js';
export * from './nodes/rooms/index.js';
export * from './nodes/replication/index.js';

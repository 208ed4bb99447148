// Replication, transport side: replicators that move oplog entries between nodes over their links.
export { Replication, MAX_SERVED_PER_PEER, replicationProviders, type ReplicationStats } from './replication.js';
export { REPLICATION_DEFAULTS, REPLICATION_CAPS, type ReplicationOptions } from './options.js';
export { REPLICATION_SERVICE, WIRE_BATCH_CAPS } from './wire.js';
export type { PullStatus, PullState } from './pull-replicator.js';
export type { PushStatus } from './push-replicator.js';
export { replicationMetrics, ReplicationTransportMetrics } from './metrics.js';

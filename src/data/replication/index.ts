// Replication, data side: the hybrid clock, the oplog written in the data's own transaction, its source and sink.
export * from './contract.js';
export {
  HybridClock,
  encodeHlc,
  decodeHlc,
  compareHlc,
  HLC_ZERO,
  HLC_DEFAULTS,
  HLC_CAPS,
  HLC_MAX_COUNTER,
  type HybridClockOptions,
  type HybridTimestamp,
} from './hlc.js';
export { Oplog, OPLOG_DEFAULTS, OPLOG_CAPS, type OplogOptions, type PendingEntry } from './oplog.js';
export { OplogApplier, ReplicationSpanName, type OplogApplierOptions } from './sink.js';
export { ormTarget } from './orm-target.js';
export { readConflicts, CONFLICT_LOG_DEFAULTS, CONFLICT_LOG_CAPS, type ConflictRecord } from './conflicts.js';
export { HOOK_DEFAULTS, HOOK_CAPS, lwwWinner, optimisticWinner, type PolicyTimers } from './policies.js';
export type { ConflictResolver, ConflictSide, ReplicatedOption, ReplicatedTarget, ReplicationPolicyName, SnapshotProvider as OplogSnapshotProvider } from './targets.js';
export { ChangeFeed, appliedChanges, type ChangeFeedOptions } from './feed.js';

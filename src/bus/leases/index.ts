// Leader leases with fencing tokens, in a shared SQL KV store; the fencing check fenced writes call.
export * from './errors.js';
export { LeaderLease, leaderLeaseChild } from './leader-lease.js';
export type { DeposedReason, LeaseCall, LeaseEvent, LeaseRole, LeaseStatus } from './events.js';
export { LEASE_DEFAULTS, type LeaderLeaseOptions } from './options.js';
export { acquireLease, readLease, releaseLease, renewLease, type LeaseRecord } from './lease-record.js';
export { DEFAULT_FENCE_TABLE, checkFence, createFenceTable, highestFencingToken } from './fence.js';

/**
 * Options of the replication transport: what is replicated (this node's oplog as the source, its
 * sink for everyone else's) and the bounds of each replicator. Every number has a default and a cap.
 */
import type { Registry } from 'prom-client';
import type { OplogSink, OplogSource } from '../../data/replication/contract.js';
import { boundedOption, checkServiceOptions, InvalidClusterArgument } from '../cluster-errors.js';

export interface ReplicationOptions {
  /** This node's oplog: what peers pull. Its instance id must be the node's name (peers are attributed to their link). */
  readonly source: OplogSource;
  /** Where peers' entries are applied (their policies, cursors and conflict log). */
  readonly sink: OplogSink;
  /** Which connected peers to replicate with (default: every peer that runs replication too). */
  readonly peers?: (peer: string) => boolean;
  /** Entries behind one peer above which `/health` degrades, naming it (default 10,000). */
  readonly lagAlertEntries?: number;
  /** Patience for one pull or snapshot page from a peer (default 10 s, 100 ms..120 s). */
  readonly callTimeoutMs?: number;
  /** Consecutive failed rounds (timeouts, apply errors) before a replicator crashes for its supervisor to restart (default 5, 1..100). */
  readonly maxFailures?: number;
  /** Backoff between failed rounds, jittered: from `retryMinMs` (default 200) doubling to `retryMaxMs` (default 10 s, cap 60 s). */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** Batches pushed per commit wake-up before the rest is left to the peer's pull (default 4, 1..64): a slow peer pulls at its own pace. */
  readonly pushBatches?: number;
  /** prom-client registry for the lag gauge and counters. */
  readonly metrics?: Registry;
}

export interface ResolvedReplicationOptions {
  readonly source: OplogSource;
  readonly sink: OplogSink;
  readonly peers: (peer: string) => boolean;
  readonly lagAlertEntries: number;
  readonly callTimeoutMs: number;
  readonly maxFailures: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  readonly pushBatches: number;
  readonly metrics: Registry | undefined;
}

export const REPLICATION_DEFAULTS = { lagAlertEntries: 10_000, callTimeoutMs: 10_000, maxFailures: 5, retryMinMs: 200, retryMaxMs: 10_000, pushBatches: 4 } as const;
export const REPLICATION_CAPS = { lagAlertEntries: 1_000_000_000, callTimeoutMs: 120_000, maxFailures: 100, retryMaxMs: 60_000, pushBatches: 64 } as const;

const KEYS: readonly (keyof ReplicationOptions)[] = ['source', 'sink', 'peers', 'lagAlertEntries', 'callTimeoutMs', 'maxFailures', 'retryMinMs', 'retryMaxMs', 'pushBatches', 'metrics'];

export function resolveReplicationOptions(nodeName: string, options: ReplicationOptions): ResolvedReplicationOptions {
  checkServiceOptions(options, KEYS);
  if (options.source === undefined || options.sink === undefined) throw new InvalidClusterArgument('option source/sink', 'replication needs this node\'s oplog (source) and its applier (sink)');
  // The origin of every batch is the link it came over: a peer's entries must carry its node name as their instance.
  if (options.source.instance !== nodeName) {
    throw new InvalidClusterArgument('option source', `the oplog's instance (${JSON.stringify(options.source.instance)}) must be the node's name (${JSON.stringify(nodeName)})`);
  }
  if (options.peers !== undefined && typeof options.peers !== 'function') throw new InvalidClusterArgument('option peers', 'must be a function (peer) => boolean');
  const d = REPLICATION_DEFAULTS;
  const c = REPLICATION_CAPS;
  const retryMaxMs = boundedOption('retryMaxMs', options.retryMaxMs, d.retryMaxMs, 1, c.retryMaxMs);
  return {
    source: options.source,
    sink: options.sink,
    peers: options.peers ?? (() => true),
    lagAlertEntries: boundedOption('lagAlertEntries', options.lagAlertEntries, d.lagAlertEntries, 1, c.lagAlertEntries),
    callTimeoutMs: boundedOption('callTimeoutMs', options.callTimeoutMs, d.callTimeoutMs, 100, c.callTimeoutMs),
    maxFailures: boundedOption('maxFailures', options.maxFailures, d.maxFailures, 1, c.maxFailures),
    retryMinMs: boundedOption('retryMinMs', options.retryMinMs, d.retryMinMs, 1, retryMaxMs),
    retryMaxMs,
    pushBatches: boundedOption('pushBatches', options.pushBatches, d.pushBatches, 1, c.pushBatches),
    metrics: options.metrics,
  };
}

/**
 * What the oplog and the sink know of a replicated model or KV store: its name, its declared policy,
 * how to write an accepted remote entry into it (inside the sink's transaction, without appending to
 * the local oplog: the entry keeps its origin), and how to page its current state for a snapshot.
 */
import type { DataContext } from '../context.js';
import type { Queryable } from '../database.js';
import type { OplogEntry } from './contract.js';

export type ReplicationPolicyName = 'optimistic' | 'lww' | 'hook';

/** A side of a conflict, as the resolver sees it (no sequence: that is per origin, not comparable). */
export interface ConflictSide {
  readonly instance: string;
  readonly ts: string;
  readonly op: 'upsert' | 'delete';
  readonly version: number;
  readonly data: Record<string, unknown> | null;
}

/** A hook policy's resolver: returns the winning side (`local` or `remote`), within 5 s. */
export type ConflictResolver = (local: ConflictSide, remote: ConflictSide, context: { readonly model: string; readonly key: string; readonly signal: AbortSignal }) => 'local' | 'remote' | Promise<'local' | 'remote'>;

/** `replicated: { policy }` as a model or KV store declares it. */
export type ReplicatedOption =
  | { readonly policy: 'optimistic' }
  | { readonly policy: 'lww' }
  | { readonly policy: 'hook'; readonly resolve: ConflictResolver; readonly timeoutMs?: number };

export interface SnapshotProvider {
  readonly model: string;
  /** Current state as upsert entries (seq 0, stored ts/version), keys after `afterKey` in key order, at most `limit`. */
  page(afterKey: string | null, limit: number): Promise<readonly OplogEntry[]>;
}

export interface ReplicatedTarget extends SnapshotProvider {
  readonly replicated: ReplicatedOption;
  /** Writes the entry's effect (upsert the data, or delete the key) on `q`, inside the sink's transaction. */
  write(q: Queryable, entry: OplogEntry, ctx?: DataContext): Promise<void>;
  /** Writes several entries of distinct keys at once (optional: the sink falls back to `write` each). */
  writeMany?(q: Queryable, entries: readonly OplogEntry[], ctx?: DataContext): Promise<void>;
  /** The key's current data here (for the conflict log and resolvers), or null when absent. */
  read(q: Queryable, key: string, ctx?: DataContext): Promise<Record<string, unknown> | null>;
}

/**
 * The contract between the data side of replication (oplog, hybrid clock, conflict policies: this folder)
 * and the transport side (`src/nodes/replication`: replicators that push and pull entries between nodes).
 * The transport never reads tables or compares timestamps itself (R7-7): it moves batches of entries from
 * an `OplogSource` on one node to an `OplogSink` on another and keeps nothing but what these return.
 */

/** S7-7's entry shape. One entry per row or key a committed transaction changed, written in that transaction. */
export interface OplogEntry {
  /** The origin instance's oplog sequence: increasing, gap-free among committed entries of that instance. */
  readonly seq: number;
  /** The instance that made the change (its id, stable across restarts). */
  readonly instance: string;
  /** Hybrid logical timestamp, encoded so that string order is timestamp order (see `hlc.ts`). */
  readonly ts: string;
  /** The replicated model's or KV store's declared name. */
  readonly model: string;
  /** The primary key (ORM) or key (KV), as text. */
  readonly key: string;
  readonly op: 'upsert' | 'delete';
  /** The row's version after the change (ORM optimistic models), or 0 where the model keeps none. */
  readonly version: number;
  /**
   * The row's columns or the KV value (bytes under `value`) after an upsert. For a delete: the ORM
   * row's key columns (so the receiver finds the row without parsing `key`), null for KV.
   */
  readonly data: Record<string, unknown> | null;
  /**
   * Beyond S7-7: `<ts>/<instance>` of the key's last writer the origin had accepted when it made this change
   * (absent for a key it had never seen). A receiver whose last writer of the key is exactly that one
   * applies the entry as a successor; any other is a concurrent write, resolved by the policy and
   * logged as a conflict. Without it a plain overwrite of a replicated value would read as a conflict.
   */
  readonly prev?: string;
}

/** S7-10: one sync round carries at most this many entries and bytes (msgpack-encoded size). */
export const SYNC_BATCH_CAPS = { maxEntries: 500, maxBytes: 1024 * 1024 } as const;

/** Read side, on the node whose changes are being sent. Reads only that node's own (origin) entries. */
export interface OplogSource {
  readonly instance: string;
  /** The last committed sequence (0 when empty). */
  highWater(): Promise<number>;
  /**
   * Entries with `seq > afterSeq`, in order, within both caps (always at least one entry when any exists).
   * Rejects with `OplogBehindRetention` (code `REPLICATION_BEHIND_RETENTION`) when `afterSeq` is older
   * than the oldest retained entry: the reader must resync from `snapshot()`.
   */
  read(afterSeq: number, caps?: { readonly maxEntries?: number; readonly maxBytes?: number }): Promise<readonly OplogEntry[]>;
  /** Calls `listener` after each commit that appended entries (a wake-up, not data). Returns unsubscribe. */
  onAppend(listener: (highWater: number) => void): () => void;
  /**
   * The full resync path: pages of the current state of every replicated model (as upsert entries with
   * their stored `ts` and `version`), then the high water the tail continues from.
   */
  snapshot(afterKey: SnapshotCursor | null, caps?: { readonly maxEntries?: number; readonly maxBytes?: number }): Promise<SnapshotPage>;
}

export interface SnapshotCursor {
  readonly model: string;
  readonly key: string;
}

export interface SnapshotPage {
  readonly entries: readonly OplogEntry[];
  /** Null on the last page. */
  readonly next: SnapshotCursor | null;
  /** The source's high water when the snapshot began: the cursor to tail from once every page is applied. */
  readonly highWater: number;
}

/** Write side, on the receiving node. */
export interface OplogSink {
  readonly instance: string;
  /** The persisted cursor for entries that originated on `origin` (0 when none applied yet). */
  cursor(origin: string): Promise<number>;
  /**
   * Applies a batch from `origin` through each model's declared policy and advances the cursor, in one
   * transaction. Entries at or below the cursor are skipped, so applying a batch twice is a no-op.
   */
  apply(origin: string, entries: readonly OplogEntry[]): Promise<ApplyResult>;
  /** Applies one snapshot page (same policies); `done` sets the cursor to the page's `highWater`. */
  applySnapshot(origin: string, page: SnapshotPage): Promise<ApplyResult>;
}

export interface ApplyResult {
  readonly applied: number;
  readonly skipped: number;
  /** Entries refused because their timestamp is beyond the accepted drift (counted, not applied). */
  readonly refused: number;
  readonly conflicts: number;
  readonly cursor: number;
}

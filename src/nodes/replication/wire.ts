/**
 * What replication peers say to each other, and the checks on what arrives: a peer's frames are
 * untrusted input, so every entry, cursor and page is checked for shape and bounds before the sink
 * sees it (the sink then checks attribution, order and clocks). Nothing here throws on bad input:
 * a malformed message is undefined, counted by the caller.
 *
 * Sends: `push [entries, head]` (new commits, at most one sync batch), `wake [head]` (there is more:
 * pull it). Calls: `pull [afterSeq]` → {@link PullAnswer}; `snapshot [afterKey]` → a snapshot page.
 */
import type { OplogEntry, SnapshotCursor, SnapshotPage } from '../../data/replication/contract.js';
import { SYNC_BATCH_CAPS } from '../../data/replication/contract.js';

export const REPLICATION_SERVICE = 'molo.replication';
export const REPLICATION_KINDS = ['push', 'wake', 'pull', 'snapshot'] as const;

/**
 * Bytes of entries per batch on the wire: S7-10's 1 MiB, less room for the frame's own envelope,
 * so a full batch fits the transport's default frame limit (1 MiB).
 */
export const WIRE_BATCH_CAPS = { maxEntries: SYNC_BATCH_CAPS.maxEntries, maxBytes: SYNC_BATCH_CAPS.maxBytes - 64 * 1024 } as const;

export type PullAnswer =
  | { readonly entries: readonly OplogEntry[]; readonly head: number }
  /** The cursor asked for is older than the oldest entry kept: resync from a snapshot. */
  | { readonly behind: number; readonly head: number }
  | { readonly failed: string };

const MAX_TEXT = 4_096;

function isSeq(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isText(value: unknown, max = MAX_TEXT): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function isEntry(value: unknown): value is OplogEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    // Snapshot entries carry seq 0 (a row's state, not a logged change).
    isSeq(e.seq) &&
    isText(e.instance, 128) &&
    isText(e.ts, 64) &&
    isText(e.model, 256) &&
    typeof e.key === 'string' &&
    e.key.length <= MAX_TEXT &&
    (e.op === 'upsert' || e.op === 'delete') &&
    isSeq(e.version) &&
    (e.data === null || (typeof e.data === 'object' && !Array.isArray(e.data))) &&
    (e.prev === undefined || e.prev === null || isText(e.prev, 256))
  );
}

/** A batch of entries from a peer, or undefined when it is not one (too many, or any malformed). */
export function checkEntries(value: unknown): readonly OplogEntry[] | undefined {
  if (!Array.isArray(value) || value.length > WIRE_BATCH_CAPS.maxEntries) return undefined;
  for (const entry of value) if (!isEntry(entry)) return undefined;
  // A `prev` of null (how some codecs carry an absent field) is the same as none.
  return value.map((entry: OplogEntry) => ((entry as { prev?: unknown }).prev === null ? { ...entry, prev: undefined } : entry));
}

export function checkSeq(value: unknown): number | undefined {
  return isSeq(value) ? value : undefined;
}

export function checkCursor(value: unknown): SnapshotCursor | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const c = value as Record<string, unknown>;
  return isText(c.model, 256) && typeof c.key === 'string' && c.key.length <= MAX_TEXT ? { model: c.model, key: c.key } : undefined;
}

export function checkPullAnswer(value: unknown): PullAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const a = value as Record<string, unknown>;
  if (typeof a.failed === 'string') return { failed: a.failed.slice(0, 100) };
  if (!isSeq(a.head)) return undefined;
  if (a.behind !== undefined) return isSeq(a.behind) ? { behind: a.behind, head: a.head } : undefined;
  const entries = checkEntries(a.entries);
  return entries === undefined ? undefined : { entries, head: a.head };
}

export function checkSnapshotPage(value: unknown): SnapshotPage | { readonly failed: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const p = value as Record<string, unknown>;
  if (typeof p.failed === 'string') return { failed: p.failed.slice(0, 100) };
  const entries = checkEntries(p.entries);
  const next = checkCursor(p.next);
  if (entries === undefined || next === undefined || !isSeq(p.highWater)) return undefined;
  return { entries, next, highWater: p.highWater };
}

/**
 * One bounded retention pass over one stream: each rule (age, count, bytes, work-queue) deletes at
 * most `batch` of the oldest messages per pass, in its own short transaction that also lowers the
 * stream's totals, so the writer (SQLite) or the stream row (Postgres) is never held for long and a
 * backlog drains over several passes. Expired de-duplication ids go the same way.
 */
import type { Database } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { StreamTables } from './schema.js';
import type { ResolvedStreamConfig } from './store.js';

export type EvictionReason = 'age' | 'bytes' | 'count' | 'workqueue';

export interface RetentionStatements {
  readonly totals: string;
  readonly oldestBefore: string;
  readonly oldest: string;
  readonly workFloor: string;
  readonly deleteUpTo: string;
  readonly lower: string;
  readonly deleteChunks: string;
  readonly sweepDedup: string;
}

export function retentionStatements(t: StreamTables, sql: (text: string) => string): RetentionStatements {
  return {
    totals: sql(`SELECT msgs, bytes, last_seq FROM ${t.streams} WHERE id = $1::int8`),
    // The newest sequence among the oldest `batch` messages older than the cutoff.
    oldestBefore: sql(`SELECT max(seq) AS seq FROM (SELECT seq FROM ${t.msgs} WHERE stream_id = $1::int8 AND time < $2::int8 ORDER BY seq LIMIT $3::int8) AS old`),
    oldest: sql(`SELECT seq, size FROM ${t.msgs} WHERE stream_id = $1::int8 ORDER BY seq LIMIT $2::int8`),
    // Below every consumer's ack floor (its lowest pending delivery, else its cursor); null without consumers.
    workFloor: sql(`SELECT min(coalesce((SELECT min(p.seq) FROM ${t.pending} p WHERE p.consumer_id = c.id), c.next_seq)) AS floor
      FROM ${t.consumers} c WHERE c.stream_id = $1::int8`),
    deleteUpTo: sql(`DELETE FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq IN (
      SELECT seq FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq <= $2::int8 ORDER BY seq LIMIT $3::int8) RETURNING seq, size, chunks`),
    lower: sql(`UPDATE ${t.streams} SET msgs = msgs - $2::int8, bytes = bytes - $3::int8 WHERE id = $1::int8`),
    deleteChunks: sql(`DELETE FROM ${t.chunks} WHERE stream_id = $1::int8 AND seq <= $2::int8
      AND NOT EXISTS (SELECT 1 FROM ${t.msgs} m WHERE m.stream_id = ${t.chunks}.stream_id AND m.seq = ${t.chunks}.seq)`),
    sweepDedup: sql(`DELETE FROM ${t.dedup} WHERE (stream_id, msg_id) IN (SELECT stream_id, msg_id FROM ${t.dedup} WHERE expires_at <= $1::int8 LIMIT $2::int8)`),
  };
}

export interface Eviction {
  readonly reason: EvictionReason;
  readonly messages: number;
}

/** One pass over one stream; answers what each rule evicted (rules that evicted nothing are left out). */
export async function retainStream(
  db: Database,
  s: RetentionStatements,
  streamId: number,
  config: ResolvedStreamConfig,
  now: number,
  batch: number,
): Promise<Eviction[]> {
  const evictions: Eviction[] = [];
  const evict = async (reason: EvictionReason, upTo: number | null): Promise<void> => {
    if (upTo === null) return;
    const messages = await deleteUpTo(db, s, streamId, upTo, batch);
    if (messages > 0) evictions.push({ reason, messages });
  };
  const age = (await db.query(s.oldestBefore, [streamId, now - config.maxAgeMs, batch])).rows[0]?.seq;
  await evict('age', age === null || age === undefined ? null : toNumber(age));
  const totals = (await db.query(s.totals, [streamId])).rows[0];
  if (totals === undefined) return evictions;
  const msgs = toNumber(totals.msgs);
  const bytes = toNumber(totals.bytes);
  if (msgs > config.maxMsgs || bytes > config.maxBytes) {
    const { rows } = await db.query(s.oldest, [streamId, bytes > config.maxBytes ? batch : Math.min(batch, msgs - config.maxMsgs)]);
    let overCount = msgs - config.maxMsgs;
    let overBytes = bytes - config.maxBytes;
    let upTo: number | null = null;
    let reason: EvictionReason = overCount > 0 ? 'count' : 'bytes';
    for (const row of rows) {
      if (overCount <= 0 && overBytes <= 0) break;
      upTo = toNumber(row.seq);
      overCount--;
      overBytes -= toNumber(row.size);
    }
    if (overCount <= 0 && bytes - config.maxBytes > 0 && msgs - config.maxMsgs <= 0) reason = 'bytes';
    await evict(reason, upTo);
  }
  if (config.retention === 'workqueue') {
    const floor = (await db.query(s.workFloor, [streamId])).rows[0]?.floor;
    if (floor !== null && floor !== undefined) await evict('workqueue', toNumber(floor) - 1);
  }
  return evictions;
}

export async function deleteUpTo(db: Database, s: RetentionStatements, streamId: number, upTo: number, batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(s.deleteUpTo, [streamId, upTo, batch]);
    if (rows.length === 0) return 0;
    let bytes = 0;
    let chunked = false;
    let last = 0;
    for (const row of rows) {
      bytes += toNumber(row.size);
      chunked ||= toNumber(row.chunks) > 0;
      last = Math.max(last, toNumber(row.seq));
    }
    await tx.query(s.lower, [streamId, rows.length, bytes]);
    if (chunked) await tx.query(s.deleteChunks, [streamId, last]);
    return rows.length;
  });
}

/** Deletes up to `batch` expired de-duplication ids; answers how many. */
export async function sweepDedup(db: Database, s: RetentionStatements, now: number, batch: number): Promise<number> {
  return (await db.query(s.sweepDedup, [now, batch])).affected;
}

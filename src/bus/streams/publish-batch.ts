/**
 * One group-committed publish batch, inside one transaction: per stream, lock its row (the
 * sequence counter), drop the publishes whose message id is within the window, take the next
 * sequences, insert the messages (multi-row statements, bounded by parameters and bytes) and the
 * de-duplication ids. On Postgres a NOTIFY in the same transaction wakes the other instances'
 * consumers at commit; it carries no payload.
 */
import type { Transaction } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { StreamNotFound } from './errors.js';
import type { Outcome } from './group-commit.js';
import type { EncodedMessage } from './message.js';
import { CHUNK_BYTES, INLINE_BYTES, placeholders, type StreamTables } from './schema.js';
import type { PublishAck } from './store.js';

export interface PublishItem {
  readonly stream: string;
  readonly streamId: number;
  readonly message: EncodedMessage;
  readonly msgId: string | undefined;
  readonly dedupWindowMs: number;
}

/** Rows of one INSERT: 8 parameters each, under the 1,024-parameter cap. */
const ROWS_PER_INSERT = 120;
/** Bytes of payload one INSERT carries at most (a statement to SQLite must fit the thread hop). */
const BYTES_PER_INSERT = 512 * 1024;

export interface PublishStatements {
  readonly lock: string;
  readonly advance: string;
  readonly insertChunk: string;
  readonly notify: string | undefined;
  insertRows(rows: number): string;
  findDuplicates(ids: number): string;
  insertDedup(rows: number): string;
}

export function publishStatements(t: StreamTables, sql: (text: string) => string, notifyChannel: string | undefined): PublishStatements {
  const inserts = new Map<number, string>();
  return {
    lock: sql(`SELECT last_seq FROM ${t.streams} WHERE id = $1::int8 FOR UPDATE`),
    advance: sql(`UPDATE ${t.streams} SET last_seq = last_seq + $2::int8, msgs = msgs + $2::int8, bytes = bytes + $3::int8 WHERE id = $1::int8 RETURNING last_seq`),
    insertChunk: sql(`INSERT INTO ${t.chunks} (stream_id, seq, idx, bytes) VALUES ($1::int8, $2::int8, $3::int8, $4::bytea)`),
    notify: notifyChannel === undefined ? undefined : `SELECT pg_notify('${notifyChannel}', '')`,
    insertRows(rows) {
      let text = inserts.get(rows);
      if (text === undefined) {
        const values: string[] = [];
        for (let i = 0; i < rows; i++) {
          const b = i * 8;
          values.push(`($${b + 1}::int8, $${b + 2}::int8, $${b + 3}::int8, $${b + 4}::int8, $${b + 5}::text, $${b + 6}::bytea, $${b + 7}::int8, $${b + 8}::int8)`);
        }
        text = sql(`INSERT INTO ${t.msgs} (stream_id, seq, time, enc, headers, payload, size, chunks) VALUES ${values.join(', ')}`);
        inserts.set(rows, text);
      }
      return text;
    },
    findDuplicates(ids) {
      return sql(`SELECT msg_id, seq FROM ${t.dedup} WHERE stream_id = $1::int8 AND expires_at > $2::int8 AND msg_id IN (${placeholders(3, ids, '::text')})`);
    },
    insertDedup(rows) {
      const values: string[] = [];
      for (let i = 0; i < rows; i++) values.push(`($1::int8, $${3 + i * 2}::text, $${4 + i * 2}::int8, $2::int8)`);
      // An expired id still waiting for the sweep is taken over.
      return sql(`INSERT INTO ${t.dedup} (stream_id, msg_id, seq, expires_at) VALUES ${values.join(', ')}
        ON CONFLICT (stream_id, msg_id) DO UPDATE SET seq = excluded.seq, expires_at = excluded.expires_at`);
    },
  };
}

const EMPTY = Buffer.alloc(0);

/** Writes `items` (in submission order) and answers one outcome each. */
export async function writePublishBatch(tx: Transaction, s: PublishStatements, items: readonly PublishItem[], now: number): Promise<Outcome<PublishAck>[]> {
  const outcomes: Outcome<PublishAck>[] = new Array(items.length);
  const byStream = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) {
    const list = byStream.get(items[i]!.streamId);
    if (list === undefined) byStream.set(items[i]!.streamId, [i]);
    else list.push(i);
  }
  for (const [streamId, indexes] of byStream) {
    const first = items[indexes[0]!]!;
    const kept = await dropDuplicates(tx, s, items, indexes, streamId, now, outcomes);
    if (kept === undefined) {
      for (const index of indexes) outcomes[index] = { ok: false, error: new StreamNotFound(first.stream) };
      continue;
    }
    const { fresh, repeats } = kept;
    if (fresh.length === 0) continue;
    let bytes = 0;
    for (const index of fresh) bytes += items[index]!.message.payload.byteLength;
    const { rows } = await tx.query(s.advance, [streamId, fresh.length, bytes]);
    if (rows.length === 0) {
      for (const index of indexes) outcomes[index] = { ok: false, error: new StreamNotFound(first.stream) };
      continue;
    }
    const firstSeq = toNumber(rows[0]!.last_seq) - fresh.length + 1;
    await insertMessages(tx, s, items, fresh, streamId, firstSeq, now);
    const ids: (string | number)[] = [];
    let dedupExpiry = 0;
    for (let k = 0; k < fresh.length; k++) {
      const item = items[fresh[k]!]!;
      outcomes[fresh[k]!] = { ok: true, value: { stream: item.stream, seq: firstSeq + k, duplicate: false } };
      if (item.msgId !== undefined) {
        ids.push(item.msgId, firstSeq + k);
        dedupExpiry = now + item.dedupWindowMs;
      }
    }
    for (const [index, firstIndex] of repeats) {
      const settled = outcomes[firstIndex]!;
      outcomes[index] = settled.ok ? { ok: true, value: { ...settled.value, duplicate: true } } : settled;
    }
    for (let k = 0; k < ids.length; k += 2 * 500) {
      const part = ids.slice(k, k + 2 * 500);
      await tx.query(s.insertDedup(part.length / 2), [streamId, dedupExpiry, ...part]);
    }
  }
  if (s.notify !== undefined) await tx.query(s.notify);
  return outcomes;
}

/**
 * Locks the stream row when any publish carries a message id (so the check and the insert of ids
 * are one step for concurrent publishers), settles the duplicates of earlier batches, and answers
 * the indexes to write plus the repeats of an id within this batch (index, index of its first);
 * undefined: the stream is gone.
 */
async function dropDuplicates(
  tx: Transaction,
  s: PublishStatements,
  items: readonly PublishItem[],
  indexes: readonly number[],
  streamId: number,
  now: number,
  outcomes: Outcome<PublishAck>[],
): Promise<{ fresh: number[]; repeats: [number, number][] } | undefined> {
  const ids = new Set<string>();
  for (const index of indexes) if (items[index]!.msgId !== undefined) ids.add(items[index]!.msgId!);
  if (ids.size === 0) return { fresh: [...indexes], repeats: [] };
  if ((await tx.query(s.lock, [streamId])).rows.length === 0) return undefined;
  const seen = new Map<string, number>();
  const list = [...ids];
  for (let k = 0; k < list.length; k += 500) {
    const part = list.slice(k, k + 500);
    for (const row of (await tx.query(s.findDuplicates(part.length), [streamId, now, ...part])).rows) seen.set(String(row.msg_id), toNumber(row.seq));
  }
  const fresh: number[] = [];
  const repeats: [number, number][] = [];
  const firstInBatch = new Map<string, number>();
  for (const index of indexes) {
    const item = items[index]!;
    const id = item.msgId;
    const earlier = id === undefined ? undefined : seen.get(id);
    const first = id === undefined ? undefined : firstInBatch.get(id);
    if (earlier !== undefined) outcomes[index] = { ok: true, value: { stream: item.stream, seq: earlier, duplicate: true } };
    else if (first !== undefined) repeats.push([index, first]);
    else {
      if (id !== undefined) firstInBatch.set(id, index);
      fresh.push(index);
    }
  }
  return { fresh, repeats };
}

async function insertMessages(
  tx: Transaction,
  s: PublishStatements,
  items: readonly PublishItem[],
  fresh: readonly number[],
  streamId: number,
  firstSeq: number,
  now: number,
): Promise<void> {
  const writes: Promise<unknown>[] = [];
  let params: unknown[] = [];
  let rows = 0;
  let bytes = 0;
  const flush = (): void => {
    if (rows === 0) return;
    writes.push(tx.query(s.insertRows(rows), params as never));
    params = [];
    rows = 0;
    bytes = 0;
  };
  for (let k = 0; k < fresh.length; k++) {
    const { message } = items[fresh[k]!]!;
    const seq = firstSeq + k;
    const size = message.payload.byteLength;
    const chunked = size > INLINE_BYTES;
    const pieces = chunked ? Math.ceil(size / CHUNK_BYTES) : 0;
    if (rows >= ROWS_PER_INSERT || (rows > 0 && bytes + size > BYTES_PER_INSERT)) flush();
    params.push(streamId, seq, now, message.encoding, message.headers, chunked ? EMPTY : message.payload, size, pieces);
    rows++;
    bytes += chunked ? 0 : size;
    for (let i = 0; i < pieces; i++) {
      writes.push(tx.query(s.insertChunk, [streamId, seq, i, message.payload.subarray(i * CHUNK_BYTES, Math.min(size, (i + 1) * CHUNK_BYTES))]));
    }
  }
  flush();
  // Issued together: both drivers pipeline them on the transaction's connection.
  await Promise.all(writes);
}

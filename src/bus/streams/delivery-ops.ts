/**
 * What consumers do to the tables: take deliveries (one transaction: due redeliveries, then new
 * messages from the cursor), and settle them (ack, nak, term, inProgress).
 *
 * Competing workers of one consumer never hold the same message at once: redeliveries are taken
 * with `FOR UPDATE SKIP LOCKED` (a worker skips the rows another is taking) and new messages under
 * the consumer row's lock, which moves the cursor past them in the same transaction. On SQLite the
 * one writer gives the same exclusion.
 */
import type { Queryable, Transaction } from '../../data/index.js';
import { toBuffer, toNumber } from '../../data/kv/sql-backend.js';
import { ENCODING_MSGPACK, StoredMessage } from './message.js';
import { placeholders, type StreamTables } from './schema.js';
import type { StreamHeaders } from './store.js';

export interface DeliveryStatements {
  readonly dueRedeliveries: string;
  readonly cursor: string;
  readonly newMessages: string;
  readonly newAtCursor: string;
  readonly moveCursor: string;
  readonly chunksOf: string;
  readonly setDeadline: string;
  readonly settleOne: string;
  readonly attemptOf: string;
  messagesIn(count: number): string;
  insertPending(rows: number): string;
  redeliver(count: number): string;
  deletePending(count: number): string;
  /** Deletes the pending rows of these (seq, deliveries) pairs only: acks fenced by their attempt. */
  deleteAttempts(pairs: number): string;
  attemptsIn(count: number): string;
}

export function deliveryStatements(t: StreamTables, sql: (text: string) => string): DeliveryStatements {
  const columns = 'seq, time, enc, headers, payload, chunks';
  const cache = new Map<string, string>();
  const cached = (key: string, make: () => string): string => {
    let text = cache.get(key);
    if (text === undefined) cache.set(key, (text = sql(make())));
    return text;
  };
  return {
    dueRedeliveries: sql(
      `SELECT seq, deliveries FROM ${t.pending} WHERE consumer_id = $1::int8 AND deadline <= $2::int8 ORDER BY deadline, seq LIMIT $3::int8 FOR UPDATE SKIP LOCKED`,
    ),
    cursor: sql(`SELECT next_seq, (SELECT count(*) FROM ${t.pending} WHERE consumer_id = $1::int8) AS pending,
      (SELECT last_seq FROM ${t.streams} s WHERE s.id = ${t.consumers}.stream_id) AS last_seq FROM ${t.consumers} WHERE id = $1::int8 FOR UPDATE`),
    newMessages: sql(`SELECT ${columns} FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq >= $2::int8 ORDER BY seq LIMIT $3::int8`),
    // The new messages at the cursor, read in the same hop as the cursor itself: at most $3 (the
    // batch), and no more than the room maxAckPending ($4) leaves beside the pending deliveries.
    newAtCursor: sql(`SELECT ${columns} FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq >= (SELECT next_seq FROM ${t.consumers} WHERE id = $2::int8)
      ORDER BY seq LIMIT (SELECT CASE WHEN $4::int8 - count(*) <= 0 THEN 0 WHEN $4::int8 - count(*) < $3::int8 THEN $4::int8 - count(*) ELSE $3::int8 END
      FROM ${t.pending} WHERE consumer_id = $2::int8)`),
    moveCursor: sql(`UPDATE ${t.consumers} SET next_seq = $2::int8 WHERE id = $1::int8`),
    chunksOf: sql(`SELECT bytes FROM ${t.chunks} WHERE stream_id = $1::int8 AND seq = $2::int8 ORDER BY idx`),
    // Settles fenced by the attempt ($4 / $3; NULL: any attempt). The update answers the row's
    // attempt even when it leaves it alone, so a stale settle is told apart in the same hop.
    setDeadline: sql(`UPDATE ${t.pending} SET deadline = CASE WHEN $4::int8 IS NULL OR deliveries = $4::int8 THEN $3::int8 ELSE deadline END
      WHERE consumer_id = $1::int8 AND seq = $2::int8 RETURNING deliveries`),
    settleOne: sql(`DELETE FROM ${t.pending} WHERE consumer_id = $1::int8 AND seq = $2::int8 AND ($3::int8 IS NULL OR deliveries = $3::int8) RETURNING deliveries`),
    attemptOf: sql(`SELECT deliveries FROM ${t.pending} WHERE consumer_id = $1::int8 AND seq = $2::int8`),
    messagesIn: (count) => cached(`in${count}`, () => `SELECT ${columns} FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq IN (${placeholders(2, count)}) ORDER BY seq`),
    insertPending: (rows) =>
      cached(`ins${rows}`, () => {
        const values: string[] = [];
        for (let i = 0; i < rows; i++) values.push(`($1::int8, $${3 + i}::int8, 1, $2::int8)`);
        return `INSERT INTO ${t.pending} (consumer_id, seq, deliveries, deadline) VALUES ${values.join(', ')}`;
      }),
    redeliver: (count) =>
      cached(`re${count}`, () => `UPDATE ${t.pending} SET deliveries = deliveries + 1, deadline = $2::int8 WHERE consumer_id = $1::int8 AND seq IN (${placeholders(3, count)})`),
    deletePending: (count) =>
      cached(`del${count}`, () => `DELETE FROM ${t.pending} WHERE consumer_id = $1::int8 AND seq IN (${placeholders(2, count)}) RETURNING seq, deliveries`),
    deleteAttempts: (pairs) =>
      cached(`dela${pairs}`, () => {
        const values: string[] = [];
        for (let i = 0; i < pairs; i++) values.push(`($${2 + 2 * i}::int8, $${3 + 2 * i}::int8)`);
        return `DELETE FROM ${t.pending} WHERE consumer_id = $1::int8 AND (seq, deliveries) IN (VALUES ${values.join(', ')}) RETURNING seq, deliveries`;
      }),
    attemptsIn: (count) => cached(`att${count}`, () => `SELECT seq, deliveries FROM ${t.pending} WHERE consumer_id = $1::int8 AND seq IN (${placeholders(2, count)})`),
  };
}

export interface FetchTarget {
  readonly stream: string;
  readonly streamId: number;
  readonly consumerId: number;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxAckPending: number;
}

export interface Taken {
  readonly message: StoredMessage;
  readonly deliveryCount: number;
}

export interface FetchResult {
  readonly taken: Taken[];
  /** Messages terminated because they reached maxDeliver, with their delivery counts. */
  readonly exhausted: { readonly seq: number; readonly deliveries: number }[];
  /** Redeliveries whose message retention had already removed (dropped from pending). */
  readonly vanished: number;
  /** False when the consumer row is gone. */
  readonly found: boolean;
  /** Deliveries the consumer holds unacked after this fetch (for the pending gauge). */
  readonly pending: number;
  /** Messages published past the cursor after this fetch (for the lag gauge). */
  readonly lag: number;
}

/** One fetch, inside `tx`. */
export async function takeDeliveries(tx: Transaction, s: DeliveryStatements, target: FetchTarget, batch: number, now: number): Promise<FetchResult> {
  const { consumerId, streamId } = target;
  const deadline = now + target.ackWaitMs;
  // One hop for the three reads (on Postgres the cursor's row lock is taken first, and the next
  // statement sees the cursor as the lock left it).
  const [due, cursor, ahead] = await Promise.all([
    tx.query(s.dueRedeliveries, [consumerId, now, batch]),
    tx.query(s.cursor, [consumerId]),
    tx.query(s.newAtCursor, [streamId, consumerId, batch, target.maxAckPending]),
  ]);
  if (cursor.rows.length === 0) return { taken: [], exhausted: [], vanished: 0, found: false, pending: 0, lag: 0 };
  const taken: Taken[] = [];
  const exhausted: { seq: number; deliveries: number }[] = [];
  let vanished = 0;
  // Redeliveries first, or drops of those past maxDeliver.
  const again: number[] = [];
  const deliveriesOf = new Map<number, number>();
  const drop: number[] = [];
  for (const row of due.rows) {
    const seq = toNumber(row.seq);
    const deliveries = toNumber(row.deliveries);
    if (deliveries >= target.maxDeliver) {
      exhausted.push({ seq, deliveries });
      drop.push(seq);
    } else {
      again.push(seq);
      deliveriesOf.set(seq, deliveries + 1);
    }
  }
  if (again.length > 0) {
    const messages = await readMessages(tx, s, target.stream, streamId, again);
    const found = new Set<number>();
    for (const message of messages) {
      found.add(message.seq);
      taken.push({ message, deliveryCount: deliveriesOf.get(message.seq)! });
    }
    for (const seq of again) {
      if (!found.has(seq)) {
        drop.push(seq);
        vanished++;
      }
    }
    const kept = again.filter((seq) => found.has(seq));
    if (kept.length > 0) await tx.query(s.redeliver(kept.length), [consumerId, deadline, ...kept]);
  }
  if (drop.length > 0) await tx.query(s.deletePending(drop.length), [consumerId, ...drop]);
  // Then new messages from the cursor, within maxAckPending.
  const nextSeq = toNumber(cursor.rows[0]!.next_seq);
  const pending = toNumber(cursor.rows[0]!.pending) - drop.length;
  const room = Math.min(batch - taken.length, target.maxAckPending - pending);
  let cursorAfter = nextSeq;
  let fresh = 0;
  if (room > 0) {
    let rows = ahead.rows.length > room ? ahead.rows.slice(0, room) : ahead.rows;
    // The read ahead was cut by pending deliveries this fetch has since dropped: read the rest.
    const cut = Math.max(0, Math.min(batch, target.maxAckPending - pending - drop.length));
    if (rows.length < room && ahead.rows.length > 0 && ahead.rows.length === cut) {
      const from = toNumber(ahead.rows[ahead.rows.length - 1]!.seq) + 1;
      rows = [...rows, ...(await tx.query(s.newMessages, [streamId, from, room - rows.length])).rows];
    } else if (ahead.rows.length === 0 && cut === 0) {
      rows = (await tx.query(s.newMessages, [streamId, nextSeq, room])).rows;
    }
    if (rows.length > 0) {
      const messages = await messagesOf(tx, s, target.stream, streamId, rows);
      const seqs = messages.map((message) => message.seq);
      await Promise.all([
        tx.query(s.insertPending(seqs.length), [consumerId, deadline, ...seqs]),
        tx.query(s.moveCursor, [consumerId, seqs[seqs.length - 1]! + 1]),
      ]);
      for (const message of messages) taken.push({ message, deliveryCount: 1 });
      cursorAfter = seqs[seqs.length - 1]! + 1;
      fresh = seqs.length;
    }
  }
  const last = cursor.rows[0]!.last_seq;
  const lastSeq = last === null || last === undefined ? 0 : toNumber(last);
  return { taken, exhausted, vanished, found: true, pending: pending + fresh, lag: Math.max(0, lastSeq - cursorAfter + 1) };
}

async function readMessages(tx: Queryable, s: DeliveryStatements, stream: string, streamId: number, seqs: readonly number[]): Promise<StoredMessage[]> {
  const { rows } = await tx.query(s.messagesIn(seqs.length), [streamId, ...seqs]);
  return messagesOf(tx, s, stream, streamId, rows);
}

/** Message rows as messages, with the pieces of chunked payloads read back. */
export async function messagesOf(q: Queryable, s: DeliveryStatements, stream: string, streamId: number, rows: readonly Record<string, unknown>[]): Promise<StoredMessage[]> {
  const messages: StoredMessage[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const seq = toNumber(row.seq);
    let payload = toBuffer(row.payload);
    if (toNumber(row.chunks) > 0) {
      const pieces = (await q.query(s.chunksOf, [streamId, seq])).rows.map((piece) => toBuffer(piece.bytes));
      payload = Buffer.concat(pieces);
    }
    const headers = row.headers === null || row.headers === undefined ? undefined : (JSON.parse(String(row.headers)) as StreamHeaders);
    messages[i] = new StoredMessage(stream, seq, toNumber(row.time), headers, payload, toNumber(row.enc) === ENCODING_MSGPACK ? 'msgpack' : 'bytes');
  }
  return messages;
}

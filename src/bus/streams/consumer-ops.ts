/**
 * What the consumer catalogue and the acks do to the tables: create a consumer (its cursor placed
 * by its deliver policy, under the per-stream cap), read its cursor, delete it, and write a group of
 * acks. Fetching is delivery-ops.ts.
 */
import type { DataContext, Queryable } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { sameSettings } from './config.js';
import type { DeliveryStatements, FetchTarget } from './delivery-ops.js';
import { StreamAckUnknown, StreamCapExceeded, StreamNotFound, StreamSettleStale } from './errors.js';
import type { Outcome } from './group-commit.js';
import { STREAM_LIMITS } from './limits.js';
import type { StoreSql } from './stream-ops.js';
import type { ConsumerInfo, ResolvedConsumerConfig } from './store.js';

export interface ConsumerEntry extends FetchTarget {
  readonly name: string;
  readonly config: ResolvedConsumerConfig;
}

export interface AckItem {
  readonly consumer: ConsumerEntry;
  readonly seq: number;
  /** The delivery's count when it came from a Delivery (fenced); undefined: an ack by sequence. */
  readonly attempt: number | undefined;
}

function consumerEntry(stream: string, name: string, id: number, streamId: number, config: ResolvedConsumerConfig): ConsumerEntry {
  return { stream, name, streamId, consumerId: id, config, ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver, maxAckPending: config.maxAckPending };
}

/** Creates the consumer unless it exists; one with other settings is a StreamConflict. */
export async function insertConsumer(s: StoreSql, stream: string, streamId: number, name: string, resolved: ResolvedConsumerConfig, now: number, ctx?: DataContext): Promise<void> {
  const t = s.tables;
  const sql = s.sql;
  await s.db.transaction(
    async (tx) => {
      // The stream row's lock serializes creations (and the cap count) across instances.
      const locked = await tx.query(sql(`SELECT last_seq FROM ${t.streams} WHERE id = $1::int8 FOR UPDATE`), [streamId]);
      if (locked.rows.length === 0) throw new StreamNotFound(stream);
      const lastSeq = toNumber(locked.rows[0]!.last_seq);
      const { rows } = await tx.query(sql(`SELECT config FROM ${t.consumers} WHERE stream_id = $1::int8 AND name = $2::text`), [streamId, name]);
      if (rows.length > 0) return sameSettings(`consumer ${JSON.stringify(name)} on stream ${JSON.stringify(stream)}`, JSON.parse(String(rows[0]!.config)) as object, resolved);
      const count = toNumber((await tx.query(sql(`SELECT count(*) AS n FROM ${t.consumers} WHERE stream_id = $1::int8`), [streamId])).rows[0]!.n);
      if (count >= STREAM_LIMITS.maxConsumersPerStream) throw new StreamCapExceeded('streams.maxConsumersPerStream', STREAM_LIMITS.maxConsumersPerStream, count + 1);
      const policy = resolved.deliverPolicy;
      let nextSeq: number;
      if (policy === 'all') nextSeq = 1;
      else if (policy === 'new') nextSeq = lastSeq + 1;
      else if ('startSeq' in policy) nextSeq = policy.startSeq;
      else {
        const found = await tx.query(sql(`SELECT min(seq) AS seq FROM ${t.msgs} WHERE stream_id = $1::int8 AND time >= $2::int8`), [streamId, policy.startTime]);
        const seq = found.rows[0]?.seq;
        nextSeq = seq === null || seq === undefined ? lastSeq + 1 : toNumber(seq);
      }
      await tx.query(sql(`INSERT INTO ${t.consumers} (stream_id, name, config, next_seq, created_at) VALUES ($1::int8, $2::text, $3::text, $4::int8, $5::int8)`), [
        streamId,
        name,
        JSON.stringify(resolved),
        nextSeq,
        now,
      ]);
    },
    { ctx },
  );
}

/** The consumer's cursor and settings; undefined when there is none. */
export async function readConsumer(s: StoreSql, stream: string, name: string, ctx?: DataContext): Promise<{ entry: ConsumerEntry; info: ConsumerInfo } | undefined> {
  const t = s.tables;
  const { rows } = await s.db.query(
    s.sql(`SELECT c.id, c.stream_id, c.next_seq, c.config, s.last_seq,
      (SELECT count(*) FROM ${t.pending} p WHERE p.consumer_id = c.id) AS pending,
      (SELECT min(p.seq) FROM ${t.pending} p WHERE p.consumer_id = c.id) AS min_pending,
      (SELECT min(m.seq) FROM ${t.msgs} m WHERE m.stream_id = s.id) AS first_seq
      FROM ${t.consumers} c JOIN ${t.streams} s ON s.id = c.stream_id WHERE s.name = $1::text AND c.name = $2::text`),
    [stream, name],
    ctx,
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const config = JSON.parse(String(row.config)) as ResolvedConsumerConfig;
  const nextSeq = toNumber(row.next_seq);
  const lastSeq = toNumber(row.last_seq);
  const firstSeq = row.first_seq === null || row.first_seq === undefined ? lastSeq + 1 : toNumber(row.first_seq);
  const pending = toNumber(row.pending);
  const lag = Math.max(0, lastSeq - Math.max(nextSeq, firstSeq) + 1);
  const ackFloor = (row.min_pending === null || row.min_pending === undefined ? nextSeq : toNumber(row.min_pending)) - 1;
  return {
    entry: consumerEntry(stream, name, toNumber(row.id), toNumber(row.stream_id), config),
    info: { stream, name, config, ackFloor, nextSeq, pending, lag },
  };
}

/** Deletes the consumer and its pending deliveries; answers false when there was none. */
export async function removeConsumer(s: StoreSql, streamId: number, name: string, ctx?: DataContext): Promise<boolean> {
  const t = s.tables;
  return s.db.transaction(
    async (tx) => {
      const { rows } = await tx.query(s.sql(`DELETE FROM ${t.consumers} WHERE stream_id = $1::int8 AND name = $2::text RETURNING id`), [streamId, name]);
      if (rows.length === 0) return false;
      await tx.query(s.sql(`DELETE FROM ${t.pending} WHERE consumer_id = $1::int8`), [toNumber(rows[0]!.id)]);
      return true;
    },
    { ctx },
  );
}

/**
 * A nak's or inProgress's new deadline. With an `attempt`, only while that attempt holds the
 * delivery: another one there is StreamSettleStale (the row left alone); no row is StreamAckUnknown.
 */
export async function setDeadline(s: StoreSql, statements: DeliveryStatements, entry: ConsumerEntry, seq: number, attempt: number | undefined, deadline: number, ctx?: DataContext): Promise<void> {
  const { rows } = await s.db.query(statements.setDeadline, [entry.consumerId, seq, deadline, attempt ?? null], ctx);
  if (rows.length === 0) throw new StreamAckUnknown(entry.stream, entry.name, seq);
  const current = toNumber(rows[0]!.deliveries);
  if (attempt !== undefined && current !== attempt) throw new StreamSettleStale(entry.stream, entry.name, seq, attempt, current);
}

/** A term: deletes the delivery (fenced as setDeadline is) and answers its delivery count. */
export async function termOne(s: StoreSql, statements: DeliveryStatements, entry: ConsumerEntry, seq: number, attempt: number | undefined, ctx?: DataContext): Promise<number> {
  const { rows } = await s.db.query(statements.settleOne, [entry.consumerId, seq, attempt ?? null], ctx);
  if (rows.length > 0) return toNumber(rows[0]!.deliveries);
  const held = attempt === undefined ? undefined : (await s.db.query(statements.attemptOf, [entry.consumerId, seq], ctx)).rows[0];
  if (held !== undefined) throw new StreamSettleStale(entry.stream, entry.name, seq, attempt!, toNumber(held.deliveries));
  throw new StreamAckUnknown(entry.stream, entry.name, seq);
}

/** A group of acks in a transaction of their own (one commit, one fsync on SQLite, for the whole group). */
export async function writeAcks(s: StoreSql, statements: DeliveryStatements, items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
  return s.db.transaction((tx) => deleteAcked(tx, statements, items));
}

/**
 * The acks' DELETEs, grouped by consumer (up to 1,000 sequences each), all issued at once: a fetch
 * issues them ahead of its own reads in the same transaction, which then see them done. An ack
 * with an `attempt` (a Delivery's own) deletes the row only while that attempt holds it; one that
 * finds another attempt there is StreamSettleStale, one that finds no row StreamAckUnknown.
 */
export async function deleteAcked(tx: Queryable, statements: DeliveryStatements, items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) {
    const id = items[i]!.consumer.consumerId;
    const list = groups.get(id);
    if (list === undefined) groups.set(id, [i]);
    else list.push(i);
  }
  // Per consumer: seq → the attempt whose row was deleted.
  const removed = new Map<number, Map<number, number>>();
  const deletes: Promise<void>[] = [];
  const collect = (set: Map<number, number>) => ({ rows }: { rows: readonly Record<string, unknown>[] }): void => {
    for (const row of rows) set.set(toNumber(row.seq), toNumber(row.deliveries));
  };
  for (const [consumerId, indexes] of groups) {
    const set = new Map<number, number>();
    removed.set(consumerId, set);
    const anyAttempt = [...new Set(indexes.filter((index) => items[index]!.attempt === undefined).map((index) => items[index]!.seq))];
    for (let k = 0; k < anyAttempt.length; k += 1_000) {
      const part = anyAttempt.slice(k, k + 1_000);
      deletes.push(tx.query(statements.deletePending(part.length), [consumerId, ...part]).then(collect(set)));
    }
    const pairs = uniquePairs(indexes.map((index) => items[index]!).filter((item) => item.attempt !== undefined));
    for (let k = 0; k < pairs.length; k += 500) {
      const part = pairs.slice(k, k + 500);
      deletes.push(tx.query(statements.deleteAttempts(part.length), [consumerId, ...part.flat()]).then(collect(set)));
    }
  }
  await Promise.all(deletes);
  const claimed = new Map<number, Set<number>>();
  const outcomes = items.map((item): Outcome<void> | undefined => {
    const { consumerId, stream, name } = item.consumer;
    const deleted = removed.get(consumerId)!.get(item.seq);
    if (deleted === undefined) return undefined;
    if (item.attempt !== undefined && item.attempt !== deleted) {
      return { ok: false, error: new StreamSettleStale(stream, name, item.seq, item.attempt, deleted) };
    }
    let taken = claimed.get(consumerId);
    if (taken === undefined) claimed.set(consumerId, (taken = new Set()));
    // A second ack of one sequence in the same batch finds it gone.
    if (taken.has(item.seq)) return { ok: false, error: new StreamAckUnknown(stream, name, item.seq) };
    taken.add(item.seq);
    return { ok: true, value: undefined };
  });
  // The fenced acks that deleted nothing: stale if another attempt holds the row (rare: one more read).
  const missed = new Map<number, Set<number>>();
  items.forEach((item, i) => {
    if (outcomes[i] !== undefined || item.attempt === undefined) return;
    const seqs = missed.get(item.consumer.consumerId) ?? new Set<number>();
    missed.set(item.consumer.consumerId, seqs.add(item.seq));
  });
  const held = new Map<number, Map<number, number>>();
  const reads: Promise<void>[] = [];
  for (const [consumerId, seqs] of missed) {
    const set = new Map<number, number>();
    held.set(consumerId, set);
    const list = [...seqs];
    for (let k = 0; k < list.length; k += 1_000) {
      const part = list.slice(k, k + 1_000);
      reads.push(tx.query(statements.attemptsIn(part.length), [consumerId, ...part]).then(collect(set)));
    }
  }
  await Promise.all(reads);
  return items.map((item, i): Outcome<void> => {
    const done = outcomes[i];
    if (done !== undefined) return done;
    const { stream, name, consumerId } = item.consumer;
    const current = held.get(consumerId)?.get(item.seq);
    if (item.attempt !== undefined && current !== undefined && current !== item.attempt) {
      return { ok: false, error: new StreamSettleStale(stream, name, item.seq, item.attempt, current) };
    }
    return { ok: false, error: new StreamAckUnknown(stream, name, item.seq) };
  });
}

function uniquePairs(items: readonly AckItem[]): [number, number][] {
  const seen = new Set<string>();
  const pairs: [number, number][] = [];
  for (const { seq, attempt } of items) {
    const key = `${seq}:${attempt!}`;
    if (seen.has(key)) continue;
    seen.add(key);
    pairs.push([seq, attempt!]);
  }
  return pairs;
}

/**
 * What the consumer catalogue and the acks do to the tables: create a consumer (its cursor placed
 * by its deliver policy, under the per-stream cap), read its cursor, delete it, and write a group of
 * acks. Fetching is delivery-ops.ts.
 */
import type { DataContext, Queryable } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { sameSettings } from './config.js';
import type { DeliveryStatements, FetchTarget } from './delivery-ops.js';
import { StreamAckUnknown, StreamCapExceeded, StreamNotFound } from './errors.js';
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

/** A group of acks in a transaction of their own (one commit, one fsync on SQLite, for the whole group). */
export async function writeAcks(s: StoreSql, statements: DeliveryStatements, items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
  return s.db.transaction((tx) => deleteAcked(tx, statements, items));
}

/**
 * The acks' DELETEs, grouped by consumer (up to 1,000 sequences each), all issued at once: a fetch
 * issues them ahead of its own reads in the same transaction, which then see them done.
 */
export async function deleteAcked(tx: Queryable, statements: DeliveryStatements, items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) {
    const id = items[i]!.consumer.consumerId;
    const list = groups.get(id);
    if (list === undefined) groups.set(id, [i]);
    else list.push(i);
  }
  const removed = new Map<number, Set<number>>();
  const deletes: Promise<void>[] = [];
  for (const [consumerId, indexes] of groups) {
    const seqs = [...new Set(indexes.map((index) => items[index]!.seq))];
    const set = new Set<number>();
    removed.set(consumerId, set);
    for (let k = 0; k < seqs.length; k += 1_000) {
      const part = seqs.slice(k, k + 1_000);
      deletes.push(
        tx.query(statements.deletePending(part.length), [consumerId, ...part]).then(({ rows }) => {
          for (const row of rows) set.add(toNumber(row.seq));
        }),
      );
    }
  }
  await Promise.all(deletes);
  return items.map((item): Outcome<void> => {
    const set = removed.get(item.consumer.consumerId)!;
    // A second ack of one sequence in the same batch finds it gone.
    if (set.delete(item.seq)) return { ok: true, value: undefined };
    return { ok: false, error: new StreamAckUnknown(item.consumer.stream, item.consumer.name, item.seq) };
  });
}

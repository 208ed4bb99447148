/**
 * What an operator does to a stream's contents and a consumer's position, as JetStream's purge and
 * consumer reset: delete messages (all, before a sequence, older than an age, all but the newest
 * n), and move a consumer's cursor (to a sequence, a time, the first retained message, or past the
 * last), dropping its pending deliveries. Purges delete in the retention pass's bounded batches, so
 * a purge of millions never holds the writer (SQLite) or the stream row (Postgres) for long.
 */
import type { DataContext } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { StreamInvalidArgument } from './errors.js';
import { deleteUpTo, type RetentionStatements } from './retention-pass.js';
import type { StoreSql } from './stream-ops.js';
import type { ConsumerPosition, StreamPurgeOptions } from './store.js';

const PURGE_KEYS = ['beforeSeq', 'olderThanMs', 'keep'] as const;

function wholeAtLeast(argument: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw new StreamInvalidArgument(argument, `must be an integer >= ${min}`);
  return value;
}

/** Deletes what `options` selects, batch by batch; resolves with how many messages went. */
export async function purgeMessages(s: StoreSql, r: RetentionStatements, streamId: number, options: StreamPurgeOptions, now: number, batch: number): Promise<number> {
  if (options === null || typeof options !== 'object') throw new StreamInvalidArgument('purge', 'options must be an object');
  const unknown = Object.keys(options).filter((key) => !(PURGE_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new StreamInvalidArgument(`purge.${unknown[0]}`, `is not an option (known: ${PURGE_KEYS.join(', ')})`);
  const given = PURGE_KEYS.filter((key) => options[key] !== undefined);
  if (given.length > 1) throw new StreamInvalidArgument('purge', `takes at most one of ${PURGE_KEYS.join(', ')}, got ${given.join(' and ')}`);
  let purged = 0;
  if (options.olderThanMs !== undefined) {
    const cutoff = now - wholeAtLeast('purge.olderThanMs', options.olderThanMs, 0);
    for (;;) {
      const upTo = (await s.db.query(r.oldestBefore, [streamId, cutoff, batch])).rows[0]?.seq;
      if (upTo === null || upTo === undefined) return purged;
      const deleted = await deleteUpTo(s.db, r, streamId, toNumber(upTo), batch);
      if (deleted === 0) return purged;
      purged += deleted;
    }
  }
  const lastSeq = toNumber((await s.db.query(r.totals, [streamId])).rows[0]?.last_seq ?? 0);
  let upTo = lastSeq;
  if (options.beforeSeq !== undefined) upTo = wholeAtLeast('purge.beforeSeq', options.beforeSeq, 1) - 1;
  if (options.keep !== undefined) upTo = lastSeq - wholeAtLeast('purge.keep', options.keep, 0);
  if (upTo < 1) return 0;
  for (;;) {
    const deleted = await deleteUpTo(s.db, r, streamId, upTo, batch);
    purged += deleted;
    if (deleted < batch) return purged;
  }
}

/**
 * Moves the consumer's cursor to `position` and drops its pending deliveries, in one transaction;
 * resolves with the sequence its next fetch starts from.
 */
export async function seekConsumer(s: StoreSql, streamId: number, consumerId: number, position: ConsumerPosition, ctx?: DataContext): Promise<number> {
  const t = s.tables;
  return s.db.transaction(
    async (tx) => {
      const last = toNumber((await tx.query(s.sql(`SELECT last_seq FROM ${t.streams} WHERE id = $1::int8 FOR UPDATE`), [streamId])).rows[0]?.last_seq ?? 0);
      let next: number;
      if (position === 'new') next = last + 1;
      else if (position === 'first') {
        const first = (await tx.query(s.sql(`SELECT min(seq) AS seq FROM ${t.msgs} WHERE stream_id = $1::int8`), [streamId])).rows[0]?.seq;
        next = first === null || first === undefined ? last + 1 : toNumber(first);
      } else if (typeof position === 'object' && position !== null && 'seq' in position) {
        next = wholeAtLeast('seek.seq', position.seq, 1);
        if (next > last + 1) throw new StreamInvalidArgument('seek.seq', `is past the stream's next sequence (${last + 1})`);
      } else if (typeof position === 'object' && position !== null && 'time' in position) {
        const at = position.time instanceof Date ? position.time.getTime() : position.time;
        wholeAtLeast('seek.time', at, 0);
        const found = (await tx.query(s.sql(`SELECT min(seq) AS seq FROM ${t.msgs} WHERE stream_id = $1::int8 AND time >= $2::int8`), [streamId, at])).rows[0]?.seq;
        next = found === null || found === undefined ? last + 1 : toNumber(found);
      } else throw new StreamInvalidArgument('seek', "must be { seq }, { time }, 'first' or 'new'");
      await tx.query(s.sql(`UPDATE ${t.consumers} SET next_seq = $2::int8 WHERE id = $1::int8`), [consumerId, next]);
      await tx.query(s.sql(`DELETE FROM ${t.pending} WHERE consumer_id = $1::int8`), [consumerId]);
      return next;
    },
    { ctx },
  );
}

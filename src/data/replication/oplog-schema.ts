/**
 * The oplog's tables, one DDL for both dialects (only the byte type differs):
 * - `_molo_oplog`: one row per change an instance committed, keyed (instance, seq). `data` is the
 *   row or value after an upsert, msgpack-encoded (keeps bigint, Date and bytes as they are).
 * - `_molo_oplog_head`: per origin instance, the last sequence issued, the hybrid clock's high water
 *   and the last sequence pruned by retention. Appending updates this row first, inside the writing
 *   transaction: on Postgres its row lock orders concurrent writers, so sequence order is commit
 *   order and a rolled-back writer leaves no gap; on SQLite the file's one writer does the same.
 * - `_molo_replica_keys`: the last accepted writer of each replicated key (timestamp, instance,
 *   version, deleted), local or remote: what conflict policies compare an incoming entry with, and
 *   the tombstones that keep a delete from being undone by an older upsert arriving later.
 * - `_molo_oplog_cursors`: on a receiving node, per origin, the last sequence applied.
 * - `_molo_conflicts`: the persisted conflict log (losers), bounded by age and count.
 */
import type { Backend } from '../values.js';

export function oplogDdl(backend: Backend): string[] {
  const bytes = backend === 'postgres' ? 'BYTEA' : 'BLOB';
  return [
    `CREATE TABLE IF NOT EXISTS _molo_oplog (
      instance TEXT NOT NULL, seq BIGINT NOT NULL, ts TEXT NOT NULL, model TEXT NOT NULL, key TEXT NOT NULL,
      op TEXT NOT NULL, version BIGINT NOT NULL, data ${bytes}, at_ms BIGINT NOT NULL, prev TEXT,
      PRIMARY KEY (instance, seq))`,
    `CREATE TABLE IF NOT EXISTS _molo_oplog_head (
      instance TEXT PRIMARY KEY, seq BIGINT NOT NULL, hlc TEXT NOT NULL, pruned BIGINT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS _molo_replica_keys (
      model TEXT NOT NULL, key TEXT NOT NULL, ts TEXT NOT NULL, instance TEXT NOT NULL, version BIGINT NOT NULL,
      deleted BOOLEAN NOT NULL, prev TEXT, PRIMARY KEY (model, key))`,
    `CREATE TABLE IF NOT EXISTS _molo_oplog_cursors (origin TEXT PRIMARY KEY, seq BIGINT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS _molo_conflicts (
      id ${backend === 'postgres' ? 'BIGSERIAL' : 'INTEGER'} PRIMARY KEY${backend === 'postgres' ? '' : ' AUTOINCREMENT'}, at_ms BIGINT NOT NULL,
      model TEXT NOT NULL, key TEXT NOT NULL, policy TEXT NOT NULL, reason TEXT NOT NULL,
      winner_instance TEXT NOT NULL, winner_ts TEXT NOT NULL, loser_instance TEXT NOT NULL, loser_ts TEXT NOT NULL,
      loser_op TEXT NOT NULL, loser_version BIGINT NOT NULL, loser_data ${bytes})`,
    `CREATE INDEX IF NOT EXISTS _molo_conflicts_at_idx ON _molo_conflicts (at_ms)`,
  ];
}

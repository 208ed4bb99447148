/**
 * The persisted conflict log: one row per losing side of a conflict (S7-8: kept 7 days; S7-10: at
 * most 10,000 entries). Written in the applying transaction, so a logged loser and the applied
 * winner commit together. Past either bound the oldest rows are removed, and the caller is told how
 * many (the sink turns that into an event), so nothing leaves the log silently.
 */
import type { DataContext } from '../context.js';
import type { Queryable } from '../database.js';
import type { Row } from '../values.js';
import { oplogPackr } from './oplog.js';
import type { ConflictSide } from './targets.js';

export const CONFLICT_LOG_DEFAULTS = { maxEntries: 10_000, maxAgeMs: 7 * 24 * 3600 * 1000 } as const;
export const CONFLICT_LOG_CAPS = { maxEntries: 10_000, maxAgeMs: 7 * 24 * 3600 * 1000 } as const;

export interface ConflictRecord {
  readonly atMs: number;
  readonly model: string;
  readonly key: string;
  readonly policy: string;
  /** `lww`, `version`, `hook` or `hook-timeout`: what decided. */
  readonly reason: string;
  readonly winner: { readonly instance: string; readonly ts: string };
  readonly loser: ConflictSide;
}

export async function logConflict(q: Queryable, record: ConflictRecord, ctx?: DataContext): Promise<void> {
  const l = record.loser;
  await q.query(
    `INSERT INTO _molo_conflicts (at_ms, model, key, policy, reason, winner_instance, winner_ts, loser_instance, loser_ts, loser_op, loser_version, loser_data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [record.atMs, record.model, record.key, record.policy, record.reason, record.winner.instance, record.winner.ts, l.instance, l.ts, l.op, l.version, l.data === null ? null : oplogPackr.pack(l.data)],
    ctx,
  );
}

/** Removes rows older than `maxAgeMs` and the oldest beyond `maxEntries`; resolves with how many went. */
export async function trimConflicts(q: Queryable, now: number, maxEntries: number, maxAgeMs: number, ctx?: DataContext): Promise<number> {
  let removed = (await q.query(`DELETE FROM _molo_conflicts WHERE at_ms < $1`, [now - maxAgeMs], ctx)).affected;
  const count = Number((await q.query<{ n: bigint | number }>(`SELECT COUNT(*) AS n FROM _molo_conflicts`, undefined, ctx)).rows[0]!.n);
  if (count > maxEntries) {
    removed += (await q.query(`DELETE FROM _molo_conflicts WHERE id IN (SELECT id FROM _molo_conflicts ORDER BY id LIMIT $1)`, [count - maxEntries], ctx)).affected;
  }
  return removed;
}

/** The log, oldest first (at most `limit` rows). */
export async function readConflicts(q: Queryable, limit = 1_000): Promise<ConflictRecord[]> {
  const rows = (await q.query<Row>(`SELECT * FROM _molo_conflicts ORDER BY id LIMIT $1`, [limit], undefined, { maxRows: limit })).rows;
  return rows.map((r) => ({
    atMs: Number(r.at_ms),
    model: r.model as string,
    key: r.key as string,
    policy: r.policy as string,
    reason: r.reason as string,
    winner: { instance: r.winner_instance as string, ts: r.winner_ts as string },
    loser: {
      instance: r.loser_instance as string,
      ts: r.loser_ts as string,
      op: r.loser_op as 'upsert' | 'delete',
      version: Number(r.loser_version),
      data: r.loser_data === null ? null : (oplogPackr.unpack(r.loser_data as Buffer) as Record<string, unknown>),
    },
  }));
}

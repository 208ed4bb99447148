/**
 * Presence across instances: who is in each room, in a shared Postgres table. Each instance renews
 * its own rows (a heartbeat that pushes their expiry), and any instance sweeps rows past their
 * expiry: the entries of a crashed instance go within one TTL, and the instance that swept them
 * publishes their leaves, so clients see them as events like any other leave.
 */
import type { PostgresDatabase } from '../../data/index.js';
import { InvalidRoomOption } from './errors.js';

export interface PresenceEntry {
  readonly room: string;
  readonly socket: string;
  readonly instance: string;
  readonly user: unknown;
}

export interface PresenceStore {
  readonly ttlMs: number;
  join(entry: PresenceEntry): Promise<void>;
  /** Resolves with whether the entry was there (a sweep may have taken it first). */
  leave(room: string, socket: string): Promise<boolean>;
  list(room: string): Promise<PresenceEntry[]>;
  /** Renews every entry of `instance`. */
  heartbeat(instance: string): Promise<void>;
  /** Deletes entries past their expiry (at most `limit`), answering them; one instance gets each. */
  sweep(limit?: number): Promise<PresenceEntry[]>;
}

export interface PostgresPresenceOptions {
  /** Table (default `molo_room_presence`). */
  readonly table?: string;
  /** An entry not renewed for this long is removed (default 15,000 ms; 1,000..600,000). */
  readonly ttlMs?: number;
}

function rowEntry(row: Record<string, unknown>): PresenceEntry {
  return { room: String(row.room), socket: String(row.socket), instance: String(row.instance), user: JSON.parse(String(row.user_json)) as unknown };
}

export async function postgresPresence(db: PostgresDatabase, options: PostgresPresenceOptions = {}): Promise<PresenceStore> {
  const table = options.table ?? 'molo_room_presence';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) throw new InvalidRoomOption('presence.table', 'must be a lowercase SQL identifier');
  const ttlMs = options.ttlMs ?? 15_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 1_000 || ttlMs > 600_000) throw new InvalidRoomOption('presence.ttlMs', 'must be an integer in 1000..600000');
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1::text))', [`molo_presence:${table}`]);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${table} (room text NOT NULL, socket text NOT NULL, instance text NOT NULL, user_json text NOT NULL,
      expires_at int8 NOT NULL, PRIMARY KEY (room, socket))`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${table}_instance ON ${table} (instance)`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${table}_expires ON ${table} (expires_at)`);
  });
  const expiry = (): number => Date.now() + ttlMs;
  return {
    ttlMs,
    async join(entry) {
      await db.query(
        `INSERT INTO ${table} (room, socket, instance, user_json, expires_at) VALUES ($1, $2, $3, $4, $5::int8)
         ON CONFLICT (room, socket) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [entry.room, entry.socket, entry.instance, JSON.stringify(entry.user ?? null), expiry()],
      );
    },
    async leave(room, socket) {
      const { rows } = await db.query(`DELETE FROM ${table} WHERE room = $1 AND socket = $2 RETURNING room`, [room, socket]);
      return rows.length > 0;
    },
    async list(room) {
      const { rows } = await db.query(`SELECT room, socket, instance, user_json FROM ${table} WHERE room = $1 AND expires_at > $2::int8 ORDER BY socket`, [room, Date.now()]);
      return rows.map(rowEntry);
    },
    async heartbeat(instance) {
      await db.query(`UPDATE ${table} SET expires_at = $2::int8 WHERE instance = $1`, [instance, expiry()]);
    },
    async sweep(limit = 1_000) {
      const { rows } = await db.query(
        `DELETE FROM ${table} WHERE (room, socket) IN (SELECT room, socket FROM ${table} WHERE expires_at <= $1::int8 LIMIT $2::int8 FOR UPDATE SKIP LOCKED)
         RETURNING room, socket, instance, user_json`,
        [Date.now(), limit],
      );
      return rows.map(rowEntry);
    },
  };
}

/**
 * What the stream catalogue does to the tables: create a stream (under its cap), read its row, and
 * delete it with everything it holds in bounded batches. A deletion never runs one DELETE over a
 * whole stream: its rows go `batch` at a time, each in its own short statement, while the stream
 * row still stands (on SQLite a freed rowid may be handed to the next stream, so no row of the old
 * one may outlive it); a last transaction removes the stream row with what was added meanwhile.
 */
import type { DataContext, Database } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { sameSettings } from './config.js';
import { StreamCapExceeded } from './errors.js';
import { STREAM_LIMITS } from './limits.js';
import type { StreamTables } from './schema.js';
import type { ResolvedStreamConfig, StreamInfo } from './store.js';

/** The database, its tables and the backend's dialect: what every store operation needs. */
export interface StoreSql {
  readonly db: Database;
  readonly tables: StreamTables;
  readonly sql: (text: string) => string;
}

export interface StreamRow {
  readonly id: number;
  readonly info: StreamInfo;
}

/** Creates the stream unless it exists; one with other settings is a StreamConflict. */
export async function insertStream(s: StoreSql, name: string, resolved: ResolvedStreamConfig, now: number, ctx?: DataContext): Promise<void> {
  const t = s.tables;
  await s.db.transaction(
    async (tx) => {
      const { rows } = await tx.query(s.sql(`SELECT config FROM ${t.streams} WHERE name = $1::text`), [name]);
      if (rows.length > 0) return sameSettings(`stream ${JSON.stringify(name)}`, JSON.parse(String(rows[0]!.config)) as object, resolved);
      const count = toNumber((await tx.query(`SELECT count(*) AS n FROM ${t.streams}`)).rows[0]!.n);
      if (count >= STREAM_LIMITS.maxStreams) throw new StreamCapExceeded('streams.maxStreams', STREAM_LIMITS.maxStreams, count + 1);
      await tx.query(s.sql(`INSERT INTO ${t.streams} (name, config, created_at) VALUES ($1::text, $2::text, $3::int8) ON CONFLICT (name) DO NOTHING`), [
        name,
        JSON.stringify(resolved),
        now,
      ]);
    },
    { ctx },
  );
}

const STREAM_COLUMNS = 'id, name, config, last_seq, msgs, bytes';

/** The stream's row with its consumer count; undefined when there is none. */
export async function readStream(s: StoreSql, name: string, ctx?: DataContext): Promise<StreamRow | undefined> {
  const t = s.tables;
  const { rows } = await s.db.query(
    s.sql(`SELECT ${STREAM_COLUMNS}, (SELECT count(*) FROM ${t.consumers} c WHERE c.stream_id = s.id) AS consumers FROM ${t.streams} s WHERE name = $1::text`),
    [name],
    ctx,
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const config = JSON.parse(String(row.config)) as ResolvedStreamConfig;
  return {
    id: toNumber(row.id),
    info: { name, config, lastSeq: toNumber(row.last_seq), messages: toNumber(row.msgs), bytes: toNumber(row.bytes), consumers: toNumber(row.consumers) },
  };
}

/**
 * Deletes the stream, its messages, pieces, de-duplication ids, consumers and their pending
 * deliveries, `batch` rows per statement; answers false when there was no such stream.
 */
export async function removeStream(s: StoreSql, name: string, batch: number, ctx?: DataContext): Promise<boolean> {
  const t = s.tables;
  const sql = s.sql;
  const found = await s.db.query(sql(`SELECT id FROM ${t.streams} WHERE name = $1::text`), [name], ctx);
  if (found.rows.length === 0) return false;
  const id = toNumber(found.rows[0]!.id);
  const ofConsumers = `SELECT id FROM ${t.consumers} WHERE stream_id = $1::int8`;
  const batches = [
    `DELETE FROM ${t.pending} WHERE (consumer_id, seq) IN (SELECT consumer_id, seq FROM ${t.pending} WHERE consumer_id IN (${ofConsumers}) LIMIT $2::int8)`,
    `DELETE FROM ${t.chunks} WHERE stream_id = $1::int8 AND (seq, idx) IN (SELECT seq, idx FROM ${t.chunks} WHERE stream_id = $1::int8 LIMIT $2::int8)`,
    `DELETE FROM ${t.msgs} WHERE stream_id = $1::int8 AND seq IN (SELECT seq FROM ${t.msgs} WHERE stream_id = $1::int8 ORDER BY seq LIMIT $2::int8)`,
    `DELETE FROM ${t.dedup} WHERE stream_id = $1::int8 AND msg_id IN (SELECT msg_id FROM ${t.dedup} WHERE stream_id = $1::int8 LIMIT $2::int8)`,
  ].map(sql);
  for (const statement of batches) {
    while ((await s.db.query(statement, [id, batch], ctx)).affected >= batch);
  }
  // What publishers and fetches added during the batches goes with the stream row.
  return s.db.transaction(
    async (tx) => {
      const { rows } = await tx.query(sql(`DELETE FROM ${t.streams} WHERE id = $1::int8 RETURNING id`), [id]);
      if (rows.length === 0) return false;
      await tx.query(sql(`DELETE FROM ${t.pending} WHERE consumer_id IN (${ofConsumers})`), [id]);
      for (const table of [t.consumers, t.msgs, t.chunks, t.dedup]) await tx.query(sql(`DELETE FROM ${table} WHERE stream_id = $1::int8`), [id]);
      return true;
    },
    { ctx },
  );
}

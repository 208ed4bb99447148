/**
 * How envelopes are stored and read back so that no statement or reply outgrows the SQLite
 * worker's frame budget (about 1 MiB, and a string parameter counts 3 bytes a character): an
 * envelope's JSON up to INLINE_CHARS lives in its task row; a longer one (a payload near the 1 MiB
 * cap) is written as bytes in CHUNK_BYTES pieces to `<p>_chunks`, the row holding '' and the count.
 * Statements that return many rows return envelopes only up to RETURN_CHARS inline
 * (ENVELOPE_COLUMNS); longer ones are read one row or chunk at a time (`hydrate`). The same on
 * Postgres, which keeps one code path and one test for both.
 */
import type { Queryable, Row } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { TaskTables } from './schema.js';

export const INLINE_CHARS = 64 * 1024;
export const CHUNK_BYTES = 256 * 1024;
/** Envelopes longer than this come back from multi-row statements as NULL and are read on their own. */
export const RETURN_CHARS = 2 * 1024;
/** Rows a statement returns at most where envelopes come with them: 100 × 3 × RETURN_CHARS stays well inside the budget. */
export const ROWS_PER_READ = 100;
/** Characters of envelope JSON one INSERT carries at most (counted 3 bytes each by the SQLite channel). */
export const CHARS_PER_INSERT = 200_000;

/** The envelope (when short) and the chunk count, as `envelope, chunks`. */
export const ENVELOPE_COLUMNS = `CASE WHEN length(envelope) <= ${RETURN_CHARS} THEN envelope END AS envelope, chunks`;

/** What the task row holds for `json`, and the chunks to write after it (none when inline). */
export function storedForm(json: string): { readonly inline: string; readonly chunks: Buffer[] } {
  if (json.length <= INLINE_CHARS) return { inline: json, chunks: [] };
  const bytes = Buffer.from(json, 'utf8');
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
  return { inline: '', chunks };
}

export async function writeChunks(tx: Queryable, t: TaskTables, sql: (text: string) => string, id: string, chunks: readonly Buffer[]): Promise<void> {
  for (let idx = 0; idx < chunks.length; idx++) {
    await tx.query(sql(`INSERT INTO ${t.chunks} (task_id, idx, bytes) VALUES ($1::text, $2::int8, $3::bytea)`), [id, idx, chunks[idx]!]);
  }
}

/** Fills in `envelope` on rows that came back without it (long inline, or chunked). */
export async function hydrate(db: Queryable, t: TaskTables, sql: (text: string) => string, rows: readonly Row[]): Promise<void> {
  for (const row of rows) {
    if (row.envelope !== null && row.envelope !== undefined && row.envelope !== '') continue;
    const chunks = toNumber(row.chunks ?? 0);
    if (chunks === 0) {
      const { rows: found } = await db.query(sql(`SELECT envelope FROM ${t.tasks} WHERE id = $1::text`), [String(row.id)]);
      (row as Record<string, unknown>).envelope = found[0]?.envelope;
      continue;
    }
    const parts: Buffer[] = [];
    for (let idx = 0; idx < chunks; idx++) {
      const { rows: found } = await db.query(sql(`SELECT bytes FROM ${t.chunks} WHERE task_id = $1::text AND idx = $2::int8`), [String(row.id), idx]);
      const bytes = found[0]?.bytes;
      parts.push(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes as Uint8Array));
    }
    (row as Record<string, unknown>).envelope = Buffer.concat(parts).toString('utf8');
  }
}

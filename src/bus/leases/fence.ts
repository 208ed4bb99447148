/**
 * The fencing check: one table `(schedule_key, highest_token)` beside the data the fenced writes
 * change. A write carries its leader's token and calls {@link checkFence} inside its own
 * transaction; the check raises the key's highest token to the write's, or refuses the write when
 * its token is lower than one already seen, which throws and so rolls the whole transaction back.
 * One statement on both backends (an upsert whose update is conditional): on Postgres the row lock
 * taken by the upsert orders concurrent checks of one key, and SQLite has one writer.
 *
 * Tokens are comparable only when they come from one lease store (see lease-record.ts).
 */
import type { Queryable } from '../../data/index.js';
import { InvalidBusOption } from '../errors.js';
import { StaleFencingToken } from './errors.js';

export const DEFAULT_FENCE_TABLE = 'molo_fences';

/** Keys are schedule ids and the like; bounded so a row stays small. */
const MAX_FENCE_KEY_LENGTH = 512;

/** Creates the fence table if missing (idempotent; run once at startup, in or out of a transaction). */
export async function createFenceTable(db: Queryable, table: string = DEFAULT_FENCE_TABLE): Promise<void> {
  checkFenceTable(table);
  const tokenType = db.backend === 'postgres' ? 'int8' : 'INTEGER';
  await db.query(`CREATE TABLE IF NOT EXISTS ${table} (schedule_key text PRIMARY KEY, highest_token ${tokenType} NOT NULL)`);
}

/**
 * Inside the caller's transaction `tx`: accepts `token` for `key` (raising the key's highest token
 * to it) unless a higher token was already seen, in which case it throws StaleFencingToken and the
 * caller's transaction must roll back (letting the error propagate out of `db.transaction` does).
 * An equal token passes: one leader makes many writes in its term.
 */
export async function checkFence(tx: Queryable, key: string, token: number, table: string = DEFAULT_FENCE_TABLE): Promise<void> {
  checkFenceTable(table);
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_FENCE_KEY_LENGTH) {
    throw new InvalidBusOption('fence.key', `must be a string of 1..${MAX_FENCE_KEY_LENGTH} characters`);
  }
  if (!Number.isSafeInteger(token) || token < 0) throw new InvalidBusOption('fence.token', `must be a whole number >= 0, got ${String(token)}`);
  const cast = tx.backend === 'postgres' ? '::int8' : '';
  const { rows } = await tx.query<{ highest_token: unknown }>(
    `INSERT INTO ${table} (schedule_key, highest_token) VALUES ($1, $2${cast})
     ON CONFLICT (schedule_key) DO UPDATE SET highest_token = excluded.highest_token
     WHERE ${table}.highest_token <= excluded.highest_token
     RETURNING highest_token`,
    [key, token],
  );
  if (rows.length > 0) return;
  const highest = await tx.query<{ highest_token: unknown }>(`SELECT highest_token FROM ${table} WHERE schedule_key = $1`, [key]);
  throw new StaleFencingToken(key, token, Number(highest.rows[0]?.highest_token ?? Number.NaN));
}

/** The highest token seen for `key`, or null when none was. */
export async function highestFencingToken(db: Queryable, key: string, table: string = DEFAULT_FENCE_TABLE): Promise<number | null> {
  checkFenceTable(table);
  const { rows } = await db.query<{ highest_token: unknown }>(`SELECT highest_token FROM ${table} WHERE schedule_key = $1`, [key]);
  return rows.length === 0 ? null : Number(rows[0]!.highest_token);
}

/** The table name is spliced into statements: only a plain identifier is accepted. */
function checkFenceTable(table: unknown): void {
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,39}$/.test(table)) {
    throw new InvalidBusOption('fence.table', 'must be 1-40 lowercase letters, digits or _, not starting with a digit');
  }
}

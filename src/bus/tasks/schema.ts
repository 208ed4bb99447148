/**
 * The task queue's tables: beside the stream tables, not stream messages, since priorities, delays,
 * cancel, retry and the dead-letter queue need random access to one task by id and by state.
 *
 * - `<p>_queues`: one row per queue, its resolved config and `active_bound`, an upper bound of its
 *   active tasks (enqueue-batch.ts). An enqueue locks its queue's row (Postgres), so the depth cap
 *   holds across instances.
 * - `<p>_tasks`: one row per task, in every state, dead-lettered ones included (a dead letter is a
 *   task in state `dead-lettered` with its reason: get, list and redrive stay one-row operations).
 *   `envelope` is the S7-1 JSON as enqueued; `attempts` is the live count (the envelope's field is
 *   overwritten on read). `history` is JSON lines appended with `||` (the same on both backends),
 *   trimmed to the last 50 entries on read. `prev_state` is set by the lease statement so one
 *   UPDATE ... RETURNING tells which rows it took out of `failed-retryable`.
 * - `<p>_idem`: idempotency keys with their expiry (24 h), per queue.
 * - `<p>_chunks`: envelopes too long for their row, in pieces (see envelope-store.ts).
 */
import type { Database, Queryable } from '../../data/index.js';
import { InvalidBusOption } from '../errors.js';

export interface TaskTables {
  readonly queues: string;
  readonly tasks: string;
  readonly idem: string;
  readonly chunks: string;
  /** One row per paused queue: a lease reads it in the same statement, so a pause holds on every instance at once. */
  readonly paused: string;
}

export const DEFAULT_TASK_PREFIX = 'molo_task';

export function checkTaskPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || !/^[a-z_][a-z0-9_]{0,39}$/.test(prefix)) {
    throw new InvalidBusOption('tasks.table', 'must be 1-40 lowercase letters, digits or _, not starting with a digit');
  }
  return prefix;
}

export function taskTablesOf(prefix: string): TaskTables {
  return { queues: `${prefix}_queues`, tasks: `${prefix}_tasks`, idem: `${prefix}_idem`, chunks: `${prefix}_chunks`, paused: `${prefix}_paused` };
}

function ddl(backend: 'sqlite' | 'postgres', t: TaskTables): string[] {
  const pg = backend === 'postgres';
  const int = pg ? 'int8' : 'INTEGER';
  const noRowid = pg ? '' : ' WITHOUT ROWID';
  return [
    `CREATE TABLE IF NOT EXISTS ${t.queues} (name text PRIMARY KEY, config text NOT NULL, created_at ${int} NOT NULL, active_bound ${int})`,
    `CREATE TABLE IF NOT EXISTS ${t.tasks} (id text PRIMARY KEY, queue text NOT NULL, name text NOT NULL, state text NOT NULL,
      prev_state text, priority ${int} NOT NULL, run_after ${int} NOT NULL, lease_until ${int}, lease_token ${int} NOT NULL DEFAULT 0,
      attempts ${int} NOT NULL, max_retries ${int} NOT NULL, envelope text NOT NULL, history text NOT NULL,
      reason text, detail text, finished_at ${int}, chunks ${int} NOT NULL DEFAULT 0, result text, progress text)`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (task_id text NOT NULL, idx ${int} NOT NULL, bytes ${pg ? 'bytea' : 'BLOB'} NOT NULL, PRIMARY KEY (task_id, idx))${noRowid}`,
    // Leasing: the ready rows of a queue in lease order.
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_ready ON ${t.tasks} (queue, priority DESC, id) WHERE state IN ('queued', 'failed-retryable')`,
    // Expiry: taken rows by lease end.
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_taken ON ${t.tasks} (lease_until) WHERE state IN ('leased', 'running')`,
    // Counts by state, dead letters and finished rows by age.
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_state ON ${t.tasks} (queue, state, finished_at)`,
    `CREATE TABLE IF NOT EXISTS ${t.idem} (queue text NOT NULL, key text NOT NULL, task_id text NOT NULL, expires_at ${int} NOT NULL,
      PRIMARY KEY (queue, key))${noRowid}`,
    `CREATE INDEX IF NOT EXISTS ${t.idem}_expires ON ${t.idem} (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${t.paused} (queue text PRIMARY KEY, paused_at ${int} NOT NULL)`,
  ];
}

/** Tables made before a column was added get it (idempotent): the tasks' return value and progress, the queues' active bound. */
async function addColumns(tx: Queryable, backend: 'sqlite' | 'postgres', table: string, columns: readonly (readonly [name: string, type: string])[]): Promise<void> {
  // Read first: an ALTER, even one with nothing to add, takes an exclusive lock that would wait on
  // (and deadlock with) other instances working on the table. SQLite has no ADD COLUMN IF NOT EXISTS.
  const { rows } = await tx.query(
    backend === 'postgres'
      ? `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${table}'`
      : `SELECT name FROM pragma_table_info('${table}')`,
  );
  const present = new Set(rows.map((row) => String(row.name)));
  for (const [column, type] of columns) if (!present.has(column)) await tx.query(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}

/** Creates the tables if missing; on Postgres under an advisory lock, so two instances opening at once do not race. */
export async function createTaskTables(db: Database, prefix: string): Promise<void> {
  const tables = taskTablesOf(prefix);
  await db.transaction(async (tx) => {
    if (db.backend === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(hashtext($1::text))', [`molo_tasks:${prefix}`]);
    for (const statement of ddl(db.backend, tables)) await tx.query(statement);
    await addColumns(tx, db.backend, tables.tasks, [['result', 'text'], ['progress', 'text']]);
    await addColumns(tx, db.backend, tables.queues, [['active_bound', db.backend === 'postgres' ? 'int8' : 'INTEGER']]);
  });
}

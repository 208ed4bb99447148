/**
 * Taking tasks: `lease` is one statement per batch (an UPDATE of the rows a sub-select picks, with
 * `FOR UPDATE SKIP LOCKED` on Postgres so competing leasers never get the same row, RETURNING what
 * the worker needs); `markRunning` and `heartbeat` are one statement per 500 tasks.
 */
import type { Queryable, Row, Value } from '../../data/index.js';
import { ENVELOPE_COLUMNS, hydrate, ROWS_PER_READ } from './envelope-store.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { LeasedTask } from './api.js';
import type { TaskEnvelope } from './envelope.js';
import { params } from './enqueue-batch.js';
import type { TaskState } from './lifecycle.js';
import type { TaskTables } from './schema.js';
import { HEARTBEAT_STATES, historyLine, LEASABLE, LEASED, pgPairedRows, RETRY_DUE, RUNNING, sqlStates, STARTABLE, walk } from './transitions.js';

export interface OpsContext {
  readonly backend: 'sqlite' | 'postgres';
  readonly tables: TaskTables;
  readonly sql: (text: string) => string;
}

/** A state change to report once its transaction committed. */
export interface Change {
  readonly queue: string;
  readonly id: string;
  readonly from: TaskState;
  readonly to: TaskState;
  readonly reason?: import('./api.js').TaskFailureReason;
}

/** The envelope of a row: the stored JSON with the live attempt count. */
export function envelopeOf(row: Record<string, unknown>): TaskEnvelope {
  const stored = JSON.parse(String(row.envelope)) as TaskEnvelope;
  return Object.freeze({ ...stored, attempts: toNumber(row.attempts) });
}

export async function leaseTasks(
  db: Queryable,
  c: OpsContext,
  queue: string,
  max: number,
  names: readonly string[] | undefined,
  now: number,
  leaseMs: number,
): Promise<{ tasks: LeasedTask[]; changes: Change[] }> {
  const t = c.tables;
  const nameFilter = names === undefined || names.length === 0 ? '' : ` AND name IN (${params(7, names.length)})`;
  const pick = `SELECT id FROM ${t.tasks} WHERE queue = $1::text AND state IN ${sqlStates([...LEASABLE, ...RETRY_DUE])}
    AND run_after <= $5::int8${nameFilter} AND NOT EXISTS (SELECT 1 FROM ${t.paused} WHERE queue = $1::text) ORDER BY priority DESC, id LIMIT $6::int8 FOR UPDATE SKIP LOCKED`;
  // SET expressions read the row as it was, so prev_state keeps the state the lease took it from.
  const set = `SET prev_state = state, state = '${LEASED}', lease_token = lease_token + 1, lease_until = $2::int8,
    history = history || (CASE WHEN state IN ${sqlStates(RETRY_DUE)} THEN $3::text ELSE '' END) || $4::text`;
  const text =
    c.backend === 'postgres'
      ? `WITH picked AS (${pick}) UPDATE ${t.tasks} AS t ${set} FROM picked WHERE t.id = picked.id
        RETURNING t.id, t.prev_state, t.priority, t.lease_token, t.attempts, t.max_retries, ${ENVELOPE_COLUMNS}`
      : `UPDATE ${t.tasks} ${set} WHERE id IN (${pick}) RETURNING id, prev_state, priority, lease_token, attempts, max_retries, ${ENVELOPE_COLUMNS}`;
  const rows: Row[] = [];
  // Statements of ROWS_PER_READ rows at most, so a reply with envelopes stays inside the SQLite frame budget.
  while (rows.length < max) {
    const want = Math.min(ROWS_PER_READ, max - rows.length);
    const result = await db.query(c.sql(text), [queue, now + leaseMs, historyLine(now, 'queued'), historyLine(now, LEASED), now, want, ...(names ?? [])]);
    rows.push(...result.rows);
    if (result.rows.length < want) break;
  }
  await hydrate(db, t, c.sql, rows);
  const changes: Change[] = [];
  const tasks: LeasedTask[] = [];
  for (const row of rows) {
    const from = String(row.prev_state) as TaskState;
    const attempts = toNumber(row.attempts);
    const events = RETRY_DUE.includes(from) ? (['RETRY', 'LEASE'] as const) : (['LEASE'] as const);
    let state = from;
    for (const step of walk(from, events, attempts, toNumber(row.max_retries)).steps) {
      changes.push({ queue, id: String(row.id), from: state, to: step.state });
      state = step.state;
    }
    tasks.push({ queue, envelope: envelopeOf(row), priority: toNumber(row.priority), leaseToken: toNumber(row.lease_token), leaseUntil: now + leaseMs });
  }
  // RETURNING order is not the pick order: lease order is priority, then id (enqueue time).
  tasks.sort((a, b) => b.priority - a.priority || (a.envelope.id < b.envelope.id ? -1 : a.envelope.id > b.envelope.id ? 1 : 0));
  return { tasks, changes };
}

const PAIRS_PER_STATEMENT = 500;

/**
 * An UPDATE of the rows matching (id, lease_token) pairs, parameters from `$3`. Postgres joins two
 * arrays, as acks do: `IN (VALUES ...)` lets a planner with stale statistics pick a nested loop.
 */
function updatePairs(
  c: OpsContext,
  set: string,
  states: readonly TaskState[],
  returning: readonly string[],
  chunk: readonly { id: string; leaseToken: number }[],
): { text: string; values: Value[] } {
  const table = c.tables.tasks;
  if (c.backend === 'postgres') {
    return {
      text: `UPDATE ${table} AS t SET ${set} FROM unnest($3::text[], $4::int8[]) AS v(id, lease_token)
        WHERE ${pgPairedRows(states, 3)}
        RETURNING ${returning.map((column) => `t.${column}`).join(', ')}`,
      values: [chunk.map((task) => task.id), chunk.map((task) => task.leaseToken)],
    };
  }
  const pairs = chunk.map((_, i) => `($${3 + 2 * i}::text, $${4 + 2 * i}::int8)`).join(', ');
  return {
    text: `UPDATE ${table} SET ${set} WHERE queue = $1::text AND state IN ${sqlStates(states)}
      AND (id, lease_token) IN (VALUES ${pairs}) RETURNING ${returning.join(', ')}`,
    values: chunk.flatMap((task) => [task.id, task.leaseToken]),
  };
}

async function eachChunk<T>(items: readonly T[], fn: (chunk: readonly T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PAIRS_PER_STATEMENT) await fn(items.slice(i, i + PAIRS_PER_STATEMENT));
}

export async function markRunning(db: Queryable, c: OpsContext, queue: string, tasks: readonly { id: string; leaseToken: number }[], now: number): Promise<Change[]> {
  const changes: Change[] = [];
  await eachChunk(tasks, async (chunk) => {
    const update = updatePairs(c, `state = '${RUNNING}', history = history || $2::text`, STARTABLE, ['id', 'attempts', 'max_retries'], chunk);
    const { rows } = await db.query(c.sql(update.text), [queue, historyLine(now, RUNNING), ...update.values]);
    for (const row of rows) {
      const step = walk(LEASED, ['START'], toNumber(row.attempts), toNumber(row.max_retries)).steps[0]!;
      changes.push({ queue, id: String(row.id), from: LEASED, to: step.state });
    }
  });
  return changes;
}

/** Renews the leases still held; answers the ids that are not (cancelled, expired, re-leased, gone). */
export async function renewLeases(db: Queryable, c: OpsContext, queue: string, tasks: readonly { id: string; leaseToken: number }[], leaseUntil: number): Promise<string[]> {
  const held = new Set<string>();
  await eachChunk(tasks, async (chunk) => {
    const update = updatePairs(c, 'lease_until = $2::int8', HEARTBEAT_STATES, ['id'], chunk);
    const { rows } = await db.query(c.sql(update.text), [queue, leaseUntil, ...update.values]);
    for (const row of rows) held.add(String(row.id));
  });
  return tasks.filter((task) => !held.has(task.id)).map((task) => task.id);
}

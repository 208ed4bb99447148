/**
 * Writes a batch of enqueues in one transaction (a group commit, an `enqueueMany`, or the caller's
 * own transaction). Each item settles on its own: an unknown queue, a full queue or a payload over
 * the queue's cap fails that item only. Queue rows are locked first (Postgres), which orders
 * concurrent enqueues of a queue across instances so the depth cap holds.
 */
import { nearestKey } from '../../actors/option-keys.js';
import type { Queryable } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { Outcome } from '../streams/group-commit.js';
import type { EnqueueResult } from './api.js';
import { checkPayload, checkQueueDepth, type TaskEnvelope } from './envelope.js';
import { TaskQueueNotFound } from './errors.js';
import type { ResolvedTaskQueueConfig } from './queue-config.js';
import { CHARS_PER_INSERT, storedForm, writeChunks } from './envelope-store.js';
import type { TaskTables } from './schema.js';
import { ACTIVE, historyLine, sqlStates } from './transitions.js';

export interface EnqueueItem {
  readonly queue: string;
  readonly envelope: TaskEnvelope;
  readonly priority: number;
}

export interface EnqueueContext {
  readonly tables: TaskTables;
  readonly sql: (text: string) => string;
  readonly notify: string | undefined;
  readonly idempotencyWindowMs: number;
}

/** The state a task is born in: the machine's initial state. */
export const INITIAL_STATE = 'queued' as const;

/** Rows per INSERT: the parameter cap (1,024) over 10 columns; CHARS_PER_INSERT bounds its size. */
const ROWS_PER_INSERT = 100;

export async function writeEnqueueBatch(tx: Queryable, c: EnqueueContext, items: readonly EnqueueItem[], now: number): Promise<Outcome<EnqueueResult>[]> {
  const t = c.tables;
  const { configs, depth, stored, counted } = await lockQueues(tx, c, items);
  const outcomes: Outcome<EnqueueResult>[] = [];
  const rows: EnqueueItem[] = [];
  // Read only when an item names a missing queue (a queue deleted since its config was cached): for its "did you mean".
  let known: string[] | undefined;
  for (const item of items) {
    try {
      const config = configs.get(item.queue);
      if (config === undefined) {
        known ??= (await tx.query(c.sql(`SELECT name FROM ${t.queues}`))).rows.map((row) => String(row.name));
        throw new TaskQueueNotFound(item.queue, nearestKey(item.queue, known));
      }
      checkPayload(item.envelope.payload, config.maxPayloadBytes);
      const key = item.envelope.idempotency_key;
      // Every check that can fail comes before the first write, so a refused item leaves nothing behind.
      const seen = key === null ? undefined : await liveKey(tx, c, item.queue, key, now);
      if (seen !== undefined) {
        outcomes.push({ ok: true, value: { id: seen, duplicate: true } });
        continue;
      }
      const held = depth.get(item.queue)!;
      checkQueueDepth(item.queue, held, config.maxDepth);
      if (key !== null) {
        const existing = await claimKey(tx, c, item.queue, key, item.envelope.id, now);
        // Claimed by a concurrent enqueue that committed meanwhile.
        if (existing !== undefined) {
          outcomes.push({ ok: true, value: { id: existing, duplicate: true } });
          continue;
        }
      }
      depth.set(item.queue, held + 1);
      rows.push(item);
      outcomes.push({ ok: true, value: { id: item.envelope.id, duplicate: false } });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  // The wake-up goes with the insert (pipelined on the connection): it is delivered at commit anyway.
  await Promise.all([insertRows(tx, c, rows, now), rows.length > 0 && c.notify !== undefined ? tx.query(c.notify) : undefined]);
  for (const [queue, held] of depth) {
    // The stored bound must cover what the queue now holds; a count makes it exact again.
    const bound = stored.get(queue) ?? null;
    if (counted.has(queue) || bound === null || bound < held) await tx.query(c.sql(`UPDATE ${t.queues} SET active_bound = $2::int8 WHERE name = $1::text`), [queue, held]);
  }
  return outcomes;
}

/**
 * Locks the batch's queue rows and answers, per queue, its config and the active tasks it holds,
 * or an upper bound of them: the depth cap only needs to know the batch fits. Each queue row keeps
 * `active_bound`, raised by every enqueue under the row's lock and never lowered by a task
 * finishing, so it only over-counts; while the bound plus the batch stays under the cap, no count
 * is needed. Otherwise (or with no bound: a new column, a redrive) the queue's active tasks are
 * counted, and the bound is made exact again. So the count, a scan of the queue's active rows,
 * runs once per `maxDepth − active` enqueues instead of once per batch.
 *
 * A batch for one queue (the usual group commit) locks, raises the bound by the batch and reads
 * the config in one statement; its bound then over-counts by the items refused, which is safe.
 * Several queues are locked in name order first (so concurrent batches never deadlock).
 */
async function lockQueues(
  tx: Queryable,
  c: EnqueueContext,
  items: readonly EnqueueItem[],
): Promise<{ configs: Map<string, ResolvedTaskQueueConfig>; depth: Map<string, number>; stored: Map<string, number | null>; counted: Set<string> }> {
  const t = c.tables;
  const wanted = new Map<string, number>();
  for (const item of items) wanted.set(item.queue, (wanted.get(item.queue) ?? 0) + 1);
  const queues = [...wanted.keys()];
  const raised = queues.length === 1;
  const locked = raised
    ? await tx.query(c.sql(`UPDATE ${t.queues} SET active_bound = active_bound + $2::int8 WHERE name = $1::text RETURNING name, config, active_bound`), [queues[0]!, items.length])
    : await tx.query(c.sql(`SELECT name, config, active_bound FROM ${t.queues} WHERE name IN (${params(1, queues.length)}) ORDER BY name FOR UPDATE`), queues);
  const configs = new Map<string, ResolvedTaskQueueConfig>();
  const depth = new Map<string, number>();
  const stored = new Map<string, number | null>();
  const counted = new Set<string>();
  for (const row of locked.rows) {
    const name = String(row.name);
    const config = JSON.parse(String(row.config)) as ResolvedTaskQueueConfig;
    configs.set(name, config);
    const bound = row.active_bound === null || row.active_bound === undefined ? null : toNumber(row.active_bound);
    stored.set(name, bound);
    // The bound before this batch, and whether the batch fits under it.
    const before = bound === null ? null : raised ? bound - wanted.get(name)! : bound;
    if (before !== null && before + wanted.get(name)! <= config.maxDepth) depth.set(name, before);
    else counted.add(name);
  }
  if (counted.size > 0) {
    const names = [...counted];
    const result = await tx.query(
      c.sql(`SELECT queue, count(*) AS n FROM ${t.tasks} WHERE queue IN (${params(1, names.length)}) AND state IN ${sqlStates(ACTIVE)} GROUP BY queue`),
      names,
    );
    for (const name of names) depth.set(name, 0);
    for (const row of result.rows) depth.set(String(row.queue), toNumber(row.n));
  }
  return { configs, depth, stored, counted };
}

/** The task id a live key names, if any. */
async function liveKey(tx: Queryable, c: EnqueueContext, queue: string, key: string, now: number): Promise<string | undefined> {
  const { rows } = await tx.query(c.sql(`SELECT task_id FROM ${c.tables.idem} WHERE queue = $1::text AND key = $2::text AND expires_at > $3::int8`), [queue, key, now]);
  return rows.length === 0 ? undefined : String(rows[0]!.task_id);
}

/**
 * Records the key for `id` unless a live one exists; answers the existing task's id then. One
 * upsert: an expired key is taken over, a live one is left alone (no row returned).
 */
async function claimKey(tx: Queryable, c: EnqueueContext, queue: string, key: string, id: string, now: number): Promise<string | undefined> {
  const t = c.tables;
  const { rows } = await tx.query(
    c.sql(`INSERT INTO ${t.idem} (queue, key, task_id, expires_at) VALUES ($1::text, $2::text, $3::text, $4::int8)
      ON CONFLICT (queue, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
      WHERE ${t.idem}.expires_at <= $5::int8 RETURNING task_id`),
    [queue, key, id, now + c.idempotencyWindowMs, now],
  );
  if (rows.length > 0) return undefined;
  const found = await tx.query(c.sql(`SELECT task_id FROM ${t.idem} WHERE queue = $1::text AND key = $2::text`), [queue, key]);
  return String(found.rows[0]!.task_id);
}

async function insertRows(tx: Queryable, c: EnqueueContext, rows: readonly EnqueueItem[], now: number): Promise<void> {
  let start = 0;
  while (start < rows.length) {
    const values: (string | number)[] = [];
    const tuples: string[] = [];
    const chunked: { id: string; chunks: Buffer[] }[] = [];
    let chars = 0;
    let end = start;
    while (end < rows.length && end - start < ROWS_PER_INSERT && (end === start || chars < CHARS_PER_INSERT)) {
      const { queue, envelope, priority } = rows[end]!;
      const stored = storedForm(JSON.stringify(envelope));
      if (stored.chunks.length > 0) chunked.push({ id: envelope.id, chunks: stored.chunks });
      chars += stored.inline.length;
      const runAfter = envelope.run_at === null ? now : Math.max(now, Date.parse(envelope.run_at));
      const n = values.length;
      tuples.push(
        `($${n + 1}::text, $${n + 2}::text, $${n + 3}::text, '${INITIAL_STATE}', $${n + 4}::int8, $${n + 5}::int8, 0, $${n + 6}::int8, $${n + 7}::text, $${n + 8}::text, $${n + 9}::int8)`,
      );
      values.push(envelope.id, queue, envelope.name, priority, runAfter, envelope.max_retries, stored.inline, historyLine(now, INITIAL_STATE), stored.chunks.length);
      end++;
    }
    await tx.query(
      c.sql(`INSERT INTO ${c.tables.tasks} (id, queue, name, state, priority, run_after, attempts, max_retries, envelope, history, chunks) VALUES ${tuples.join(', ')}`),
      values,
    );
    for (const { id, chunks } of chunked) await writeChunks(tx, c.tables, c.sql, id, chunks);
    start = end;
  }
}

/** `$first::text, ...` for `count` text values. */
export function params(first: number, count: number, cast = '::text'): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`$${first + i}${cast}`);
  return parts.join(', ');
}

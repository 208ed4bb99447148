/**
 * What operators and the admin surface do to single tasks and whole queues: inspect (get, list,
 * dead letters, counts), cancel, retry, redrive, and the periodic sweep of finished rows, expired
 * idempotency keys and aged dead letters. Each change goes through the lifecycle table; a change
 * the task's state does not allow is a TaskStateConflict.
 */
import type { Database, Queryable, Row } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { TaskDeadLetter, TaskFailureReason, TaskListOptions, TaskQueueInfo, TaskRecord } from './api.js';
import { InvalidBusOption } from '../errors.js';
import { IllegalTaskTransition, TaskNotFound, TaskStateConflict } from './errors.js';
import { ENVELOPE_COLUMNS, hydrate } from './envelope-store.js';
import { envelopeOf, type Change, type OpsContext } from './lease-ops.js';
import { TASK_STATES, type TaskEventType, type TaskState } from './lifecycle.js';
import { whole, type ResolvedTaskQueueConfig } from './queue-config.js';
import { isPaused } from './queue-ops.js';
import { hydrateValues, valuesOf, VALUE_COLUMNS } from './result-ops.js';
import { enforceDeadLetterCaps } from './settle-ops.js';
import { ACTIVE, DEAD_LETTERED, historyLine, parseHistory, REDRIVABLE, REDRIVEN, sqlStates, walk } from './transitions.js';

/** History longer than this comes back from multi-row reads as NULL and is read on its own (see envelope-store.ts). */
const RETURN_HISTORY_CHARS = 4 * 1024;
const COLUMNS = `id, queue, state, priority, run_after, lease_until, attempts, max_retries, ${ENVELOPE_COLUMNS}, ${VALUE_COLUMNS},
  CASE WHEN length(history) <= ${RETURN_HISTORY_CHARS} THEN history END AS history`;
/** Rows per read statement: 40 × 3 × (2 KiB + 4 KiB) stays inside the SQLite frame budget. */
const ROWS_PER_PAGE = 40;
/** A history past this many characters is restarted at a redrive, so a task redriven forever stays bounded. */
const MAX_HISTORY_CHARS = 20_000;
const SWEEP_BATCH = 5_000;

function recordOf(row: Row): TaskRecord {
  return {
    queue: String(row.queue),
    envelope: envelopeOf(row),
    state: String(row.state) as TaskState,
    priority: toNumber(row.priority),
    runAfter: toNumber(row.run_after),
    leaseUntil: row.lease_until === null || row.lease_until === undefined ? null : toNumber(row.lease_until),
    history: parseHistory(String(row.history)),
    ...valuesOf(row),
  };
}

export class AdminOps {
  constructor(
    private readonly db: Database,
    private readonly c: OpsContext,
    private readonly now: () => number,
    private readonly report: (changes: readonly Change[]) => void,
  ) {}

  async queueInfo(queue: string): Promise<TaskQueueInfo> {
    const { rows } = await this.db.query(this.c.sql(`SELECT state, count(*) AS n FROM ${this.c.tables.tasks} WHERE queue = $1::text GROUP BY state`), [queue]);
    const counts = Object.fromEntries(TASK_STATES.map((state) => [state, 0])) as Record<TaskState, number>;
    for (const row of rows) counts[String(row.state) as TaskState] = toNumber(row.n);
    const depth = ACTIVE.reduce((sum, state) => sum + counts[state], 0);
    return { name: queue, counts, depth, deadLetters: counts[DEAD_LETTERED], paused: await isPaused(this.db, this.c, queue) };
  }

  async pendingTaskNames(queue: string, limit: number): Promise<string[]> {
    const { rows } = await this.db.query(
      this.c.sql(`SELECT DISTINCT name FROM ${this.c.tables.tasks} WHERE queue = $1::text AND state IN ('queued', 'failed-retryable') LIMIT ${whole('pendingTaskNames.limit', limit, 100, 1, 10_000)}`),
      [queue],
    );
    return rows.map((row) => String(row.name));
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    if (typeof id !== 'string') return undefined;
    const { rows } = await this.db.query(this.c.sql(`SELECT ${COLUMNS} FROM ${this.c.tables.tasks} WHERE id = $1::text`), [id]);
    await this.#hydrate(rows);
    return rows.length === 0 ? undefined : recordOf(rows[0]!);
  }

  async list(queue: string, options: TaskListOptions): Promise<TaskRecord[]> {
    const limit = whole('list.limit', options.limit, 100, 1, 1_000);
    if (options.state !== undefined && !TASK_STATES.includes(options.state)) throw new InvalidBusOption('list.state', `must be one of ${TASK_STATES.join(', ')}`);
    const rows = await this.#pages(limit, options.after, (after, page) => {
      const values: (string | number)[] = [queue, page, after];
      let where = 'queue = $1::text AND id > $3::text';
      if (options.state !== undefined) {
        values.push(options.state);
        where += ' AND state = $4::text';
      }
      return this.db.query(this.c.sql(`SELECT ${COLUMNS} FROM ${this.c.tables.tasks} WHERE ${where} ORDER BY id LIMIT $2::int8`), values).then((r) => r.rows);
    });
    return rows.map(recordOf);
  }

  /** Up to `limit` rows in pages of ROWS_PER_PAGE by id, hydrated. */
  async #pages(limit: number, after: string | undefined, page: (after: string, size: number) => Promise<Row[]>): Promise<Row[]> {
    const rows: Row[] = [];
    let cursor = after ?? '';
    while (rows.length < limit) {
      const size = Math.min(ROWS_PER_PAGE, limit - rows.length);
      const part = await page(cursor, size);
      await this.#hydrate(part);
      rows.push(...part);
      if (part.length < size) break;
      cursor = String(part.at(-1)!.id);
    }
    return rows;
  }

  /** Envelopes and histories too long for a multi-row reply, read row by row. */
  async #hydrate(rows: readonly Row[]): Promise<void> {
    await hydrate(this.db, this.c.tables, this.c.sql, rows);
    for (const row of rows) {
      if (row.history !== null && row.history !== undefined) continue;
      const { rows: found } = await this.db.query(this.c.sql(`SELECT history FROM ${this.c.tables.tasks} WHERE id = $1::text`), [String(row.id)]);
      (row as Record<string, unknown>).history = found[0]?.history ?? '';
    }
    await hydrateValues(this.db, this.c, rows as Record<string, unknown>[]);
  }

  async deadLetters(queue: string, options: { readonly limit?: number; readonly after?: string }): Promise<TaskDeadLetter[]> {
    const limit = whole('deadLetters.limit', options.limit, 100, 1, 1_000);
    const rows = await this.#pages(limit, options.after, (after, size) =>
      this.db
        .query(
          this.c.sql(`SELECT id, queue, attempts, ${ENVELOPE_COLUMNS}, reason, detail, finished_at, '' AS history FROM ${this.c.tables.tasks}
            WHERE queue = $1::text AND state = '${DEAD_LETTERED}' AND id > $2::text ORDER BY id LIMIT $3::int8`),
          [queue, after, size],
        )
        .then((r) => r.rows),
    );
    return rows.map((row) => ({
      queue,
      envelope: envelopeOf(row),
      reason: String(row.reason ?? 'error') as TaskFailureReason,
      ...(row.detail === null || row.detail === undefined ? {} : { detail: String(row.detail) }),
      at: toNumber(row.finished_at),
    }));
  }

  /** One task through `event`: locked, stepped through the table, written. */
  async #step(id: string, event: TaskEventType, operation: string, write: (tx: Queryable, to: TaskState, now: number, line: string) => Promise<void>): Promise<{ state: TaskState; queue: string }> {
    const now = this.now();
    const { change } = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query(this.c.sql(`SELECT queue, state, attempts, max_retries FROM ${this.c.tables.tasks} WHERE id = $1::text FOR UPDATE`), [id]);
      const row = rows[0];
      if (row === undefined) throw new TaskNotFound(id);
      const from = String(row.state) as TaskState;
      let to: TaskState;
      try {
        to = walk(from, [event], toNumber(row.attempts), toNumber(row.max_retries)).steps[0]!.state;
      } catch (error) {
        if (error instanceof IllegalTaskTransition) throw new TaskStateConflict(id, from, operation);
        throw error;
      }
      await write(tx, to, now, historyLine(now, to, event === 'CANCEL' ? 'cancelled' : undefined));
      return { change: { queue: String(row.queue), id, from, to } satisfies Change };
    });
    this.report([change]);
    return { state: change.to, queue: change.queue };
  }

  async cancel(id: string): Promise<TaskState> {
    const t = this.c.tables;
    const { state } = await this.#step(id, 'CANCEL', 'cancel', async (tx, to, now, line) => {
      await tx.query(
        this.c.sql(`UPDATE ${t.tasks} SET state = $2::text, lease_until = NULL, reason = 'cancelled', finished_at = $3::int8, history = history || $4::text WHERE id = $1::text`),
        [id, to, now, line],
      );
    });
    return state;
  }

  /** A failed-retryable task runs now; a dead-lettered one is redriven (attempts 0). */
  async retry(id: string): Promise<{ state: TaskState; queue: string }> {
    const found = await this.get(id);
    if (found === undefined) throw new TaskNotFound(id);
    const t = this.c.tables;
    if (REDRIVABLE.includes(found.state)) {
      return this.#step(id, 'REDRIVE', 'retry', async (tx, to, now, line) => {
        await tx.query(this.c.sql(this.#redriveSet(`WHERE id = $1::text`)), [id, to, now, line]);
        await this.#forgetBound(tx, found.queue);
      });
    }
    return this.#step(id, 'RETRY', 'retry', async (tx, to, now, line) => {
      await tx.query(this.c.sql(`UPDATE ${t.tasks} SET state = $2::text, run_after = $3::int8, history = history || $4::text WHERE id = $1::text`), [id, to, now, line]);
    });
  }

  /**
   * A redrive makes finished tasks active again, which the queue's active bound (enqueue-batch.ts)
   * did not count: the bound is dropped, in the redrive's transaction, so the next enqueue counts.
   */
  async #forgetBound(tx: Queryable, queue: string): Promise<void> {
    await tx.query(this.c.sql(`UPDATE ${this.c.tables.queues} SET active_bound = NULL WHERE name = $1::text`), [queue]);
  }

  #redriveSet(where: string): string {
    return `UPDATE ${this.c.tables.tasks} SET state = $2::text, attempts = 0, run_after = $3::int8, reason = NULL, detail = NULL, finished_at = NULL,
      history = (CASE WHEN length(history) > ${MAX_HISTORY_CHARS} THEN '' ELSE history END) || $4::text ${where}`;
  }

  /** Dead letters of `queue` (all, or those `ids`) back to the queue with attempts 0. */
  async redrive(queue: string, ids?: readonly string[]): Promise<number> {
    if (ids !== undefined && (!Array.isArray(ids) || ids.length > 10_000)) throw new InvalidBusOption('redrive.ids', 'must be an array of at most 10,000 ids');
    if (ids !== undefined && ids.length === 0) return 0;
    const now = this.now();
    const values: (string | number)[] = [queue, REDRIVEN, now, historyLine(now, REDRIVEN)];
    let where = `WHERE queue = $1::text AND state IN ${sqlStates(REDRIVABLE)}`;
    if (ids !== undefined) {
      where += ` AND id IN (${ids.map((_, i) => `$${5 + i}::text`).join(', ')})`;
      values.push(...ids);
    }
    const changes: Change[] = [];
    // Chunks keep a statement's parameters under the cap.
    if (ids !== undefined && ids.length > 900) {
      let total = 0;
      for (let i = 0; i < ids.length; i += 900) total += await this.redrive(queue, ids.slice(i, i + 900));
      return total;
    }
    const rows = await this.db.transaction(async (tx) => {
      const redriven = await tx.query(this.c.sql(`${this.#redriveSet(where)} RETURNING id`), values);
      if (redriven.rows.length > 0) await this.#forgetBound(tx, queue);
      return redriven.rows;
    });
    for (const row of rows) changes.push({ queue, id: String(row.id), from: DEAD_LETTERED, to: REDRIVEN });
    this.report(changes);
    return rows.length;
  }

  /** Deletes finished rows past retention and expired idempotency keys; enforces every queue's dead-letter age cap. */
  async sweep(now: number, completedRetainMs: number, config: (queue: string) => Promise<ResolvedTaskQueueConfig>): Promise<{ queue: string; id: string; cause: 'age' | 'count' }[]> {
    const t = this.c.tables;
    await this.db.query(
      this.c.sql(`DELETE FROM ${t.tasks} WHERE id IN (SELECT id FROM ${t.tasks} WHERE state IN ('succeeded', 'cancelled') AND finished_at < $1::int8 LIMIT ${SWEEP_BATCH})`),
      [now - completedRetainMs],
    );
    await this.db.query(this.c.sql(`DELETE FROM ${t.idem} WHERE expires_at <= $1::int8`), [now]);
    // Chunks of envelopes whose task rows are gone (swept, evicted).
    await this.db.query(`DELETE FROM ${t.chunks} WHERE task_id NOT IN (SELECT id FROM ${t.tasks})`);
    const evicted: { queue: string; id: string; cause: 'age' | 'count' }[] = [];
    const { rows } = await this.db.query(`SELECT name FROM ${t.queues} ORDER BY name`);
    for (const row of rows) {
      const queue = String(row.name);
      const settings = await config(queue);
      const gone = await this.db.transaction((tx) => enforceDeadLetterCaps(tx, this.c, queue, settings, now));
      for (const entry of gone) evicted.push({ queue, ...entry });
    }
    return evicted;
  }
}

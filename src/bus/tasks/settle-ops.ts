/**
 * Ending runs, in one transaction per batch: acks, failures (a retry after `retryDelay`, or the
 * dead-letter queue), shutdown releases and lease expiries. Rows are read and locked first, each
 * one's steps computed through the lifecycle table, then written: all acks of a batch in one
 * UPDATE, other outcomes one UPDATE each (they differ per row and are the rare case).
 *
 * A succeeded task's row stays (state `succeeded`, with its history) for `completedRetainMs`, then
 * the sweep deletes it; so `get` still answers how many attempts a task took after it succeeded.
 */
import type { Queryable } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { TaskFailureReason, TaskSettlement } from './api.js';
import { params } from './enqueue-batch.js';
import type { TaskEventType, TaskState } from './lifecycle.js';
import type { Change, OpsContext } from './lease-ops.js';
import type { ResolvedTaskQueueConfig } from './queue-config.js';
import { retryDelay } from './retry.js';
import { DEAD_LETTERED, historyLine, LEASED, pgPairedRows, sqlStates, SUCCEEDED, TAKEN, walk } from './transitions.js';

export interface SettleContext extends OpsContext {
  readonly random: () => number;
}

/** A row's new values after a chain of steps. */
interface RowWrite {
  readonly id: string;
  readonly state: TaskState;
  readonly attempts: number;
  readonly runAfter: number | null;
  readonly reason: TaskFailureReason | null;
  readonly detail: string | null;
  readonly finishedAt: number | null;
  readonly history: string;
}

export interface SettleResult {
  readonly changes: Change[];
  /** Queues that got dead letters (their caps are enforced by the caller, in the same transaction). */
  readonly deadLettered: Set<string>;
}

/** Events for one settlement from the task's state (a run that never reached `running` starts first). */
function eventsFor(settlement: TaskSettlement, state: TaskState, config: ResolvedTaskQueueConfig): TaskEventType[] {
  const start: TaskEventType[] = state === LEASED ? ['START'] : [];
  const outcome = settlement.outcome;
  if (outcome.kind === 'succeeded') return [...start, 'SUCCEED'];
  if (outcome.kind === 'released') return [config.onShutdown === 'dead-letter' ? 'DEAD_LETTER' : 'RELEASE'];
  return [...start, outcome.permanent === true || outcome.reason === 'permanent' ? 'FAIL_PERMANENT' : 'FAIL'];
}

export async function settleRows(
  tx: Queryable,
  c: SettleContext,
  queue: string,
  config: ResolvedTaskQueueConfig,
  settlements: readonly TaskSettlement[],
  now: number,
): Promise<SettleResult> {
  const t = c.tables;
  const changes: Change[] = [];
  const deadLettered = new Set<string>();
  const ids = [...new Set(settlements.map((s) => s.id))];
  const { rows } = await tx.query(
    c.sql(`SELECT id, state, attempts, max_retries, lease_token FROM ${t.tasks} WHERE queue = $1::text AND id IN (${params(2, ids.length)}) FOR UPDATE`),
    [queue, ...ids],
  );
  const byId = new Map(rows.map((row) => [String(row.id), row]));
  const writes: RowWrite[] = [];
  for (const settlement of settlements) {
    const row = byId.get(settlement.id);
    // Stale: the lease moved on (expired and re-leased, cancelled, settled twice): skipped.
    if (row === undefined || toNumber(row.lease_token) !== settlement.leaseToken || !TAKEN.includes(String(row.state) as TaskState)) continue;
    byId.delete(settlement.id);
    const from = String(row.state) as TaskState;
    const attempts = toNumber(row.attempts);
    const maxRetries = toNumber(row.max_retries);
    const outcome = settlement.outcome;
    let events = eventsFor(settlement, from, config);
    let walked = walk(from, events, attempts, maxRetries);
    // A failure that leaves no retry goes on to the dead-letter queue.
    if (walked.steps.at(-1)!.state === 'failed-permanent') {
      events = [...events, 'DEAD_LETTER'];
      walked = walk(from, events, attempts, maxRetries);
    }
    const end = walked.steps.at(-1)!.state;
    let reason: TaskFailureReason | null = null;
    let detail: string | null = null;
    if (outcome.kind === 'failed') {
      const exhausted = end === DEAD_LETTERED && !events.includes('FAIL_PERMANENT');
      reason = exhausted ? 'max-retries' : outcome.permanent === true ? 'permanent' : outcome.reason;
      detail = exhausted ? `${outcome.reason}${outcome.detail === undefined ? '' : `: ${outcome.detail}`}` : (outcome.detail ?? null);
    } else if (outcome.kind === 'released') reason = 'shutdown';
    let history = '';
    let state = from;
    for (const step of walked.steps) {
      const stepReason = step.state === 'succeeded' || step.state === RUNNING_STATE ? undefined : (reason ?? undefined);
      history += historyLine(now, step.state, stepReason, stepReason === undefined ? undefined : (detail ?? undefined));
      changes.push({ queue, id: settlement.id, from: state, to: step.state, ...(stepReason === undefined ? {} : { reason: stepReason }) });
      state = step.state;
    }
    if (end === DEAD_LETTERED) deadLettered.add(queue);
    const retrying = end === 'failed-retryable';
    writes.push({
      id: settlement.id,
      state: end,
      attempts: walked.attempts,
      runAfter: retrying ? now + retryDelay(walked.attempts - 1, config.retry, c.random) : end === 'queued' ? now : null,
      reason,
      detail,
      finishedAt: end === 'succeeded' || end === DEAD_LETTERED ? now : null,
      history,
    });
  }
  await writeRows(tx, c, writes);
  return { changes, deadLettered };
}

const RUNNING_STATE: TaskState = 'running';

/**
 * The hot path: acks alone, one UPDATE per 500 with no transaction around it. `prev_state` keeps
 * the state each row left (as in the lease statement), and the steps are then walked through the
 * table for every row the UPDATE changed. A stale token or a state that is not taken matches no row.
 */
export async function ackRows(
  db: Queryable,
  c: OpsContext,
  queue: string,
  acks: readonly { id: string; leaseToken: number; result?: string | undefined }[],
  now: number,
): Promise<Change[]> {
  const changes: Change[] = [];
  // An ack with a result is a statement of its own (the result in the same UPDATE, so a succeeded
  // task always has it); the others share one per 500.
  const parts: { acks: typeof acks; result?: string }[] = [];
  const plain = acks.filter((ack) => ack.result === undefined);
  for (let i = 0; i < plain.length; i += 500) parts.push({ acks: plain.slice(i, i + 500) });
  for (const ack of acks) if (ack.result !== undefined) parts.push({ acks: [ack], result: ack.result });
  for (const { acks: part, result } of parts) {
    const withResult = result !== undefined;
    const { rows } = await db.query(c.sql(c.backend === 'postgres' ? pgAckText(c, withResult) : sqliteAckText(c, part.length, withResult)), [
      queue,
      now,
      historyLine(now, RUNNING_STATE),
      historyLine(now, SUCCEEDED),
      ...(c.backend === 'postgres' ? [part.map((ack) => ack.id), part.map((ack) => ack.leaseToken)] : part.flatMap((ack) => [ack.id, ack.leaseToken])),
      ...(withResult ? [result] : []),
    ]);
    for (const row of rows) {
      const from = String(row.prev_state) as TaskState;
      let state = from;
      for (const step of walk(from, from === LEASED ? ['START', 'SUCCEED'] : ['SUCCEED'], toNumber(row.attempts), toNumber(row.max_retries)).steps) {
        changes.push({ queue, id: String(row.id), from: state, to: step.state });
        state = step.state;
      }
    }
  }
  return changes;
}

const ACK_SET = `prev_state = state, state = '${SUCCEEDED}', lease_until = NULL, finished_at = $2::int8,
  history = history || (CASE WHEN state = '${LEASED}' THEN $3::text ELSE '' END) || $4::text`;

function sqliteAckText(c: OpsContext, count: number, withResult: boolean): string {
  const pairs = Array.from({ length: count }, (_, k) => `($${5 + 2 * k}::text, $${6 + 2 * k}::int8)`).join(', ');
  return `UPDATE ${c.tables.tasks} SET ${ACK_SET}${withResult ? `, result = $${5 + 2 * count}::text` : ''}
    WHERE queue = $1::text AND state IN ${sqlStates(TAKEN)} AND (id, lease_token) IN (VALUES ${pairs}) RETURNING id, prev_state, attempts, max_retries`;
}

/**
 * On Postgres the pairs come as two arrays joined to the rows: with `IN (VALUES ...)`, whenever the
 * planner thought few rows were taken (a table not yet analyzed, or analyzed while none were) it
 * chose a nested loop, every taken row against every pair: 500 acks took over 100 ms, not 4.
 */
function pgAckText(c: OpsContext, withResult: boolean): string {
  return `UPDATE ${c.tables.tasks} AS t SET ${ACK_SET}${withResult ? ', result = $7::text' : ''}
    FROM unnest($5::text[], $6::int8[]) AS v(id, lease_token)
    WHERE ${pgPairedRows(TAKEN, 5)}
    RETURNING t.id, t.prev_state, t.attempts, t.max_retries`;
}

/** Acks (same values but the id) in one UPDATE per 500; the rest one UPDATE each. */
async function writeRows(tx: Queryable, c: OpsContext, writes: readonly RowWrite[]): Promise<void> {
  const t = c.tables;
  const plain = new Map<string, RowWrite[]>();
  for (const write of writes) {
    if (write.state !== 'succeeded') {
      await tx.query(
        c.sql(`UPDATE ${t.tasks} SET state = $2::text, attempts = $3::int8, run_after = COALESCE($4::int8, run_after), lease_until = NULL,
          reason = $5::text, detail = $6::text, finished_at = $7::int8, history = history || $8::text WHERE id = $1::text`),
        [write.id, write.state, write.attempts, write.runAfter, write.reason, write.detail, write.finishedAt, write.history],
      );
      continue;
    }
    const group = plain.get(write.history);
    if (group === undefined) plain.set(write.history, [write]);
    else group.push(write);
  }
  for (const [history, group] of plain) {
    for (let i = 0; i < group.length; i += 500) {
      const part = group.slice(i, i + 500);
      await tx.query(
        c.sql(`UPDATE ${t.tasks} SET state = 'succeeded', lease_until = NULL, finished_at = $1::int8, history = history || $2::text
          WHERE id IN (${params(3, part.length)})`),
        [part[0]!.finishedAt, history, ...part.map((write) => write.id)],
      );
    }
  }
}

/** Expired leases (at most `limit`), back to `queued` with attempts + 1, or dead-lettered once retries are spent. */
export async function expireRows(tx: Queryable, c: OpsContext, queue: string | undefined, now: number, limit: number): Promise<SettleResult> {
  const t = c.tables;
  const { rows } = await tx.query(
    c.sql(`SELECT id, queue, state, attempts, max_retries FROM ${t.tasks} WHERE state IN ${sqlStates(TAKEN)} AND lease_until < $1::int8
      ${queue === undefined ? '' : 'AND queue = $3::text'} ORDER BY lease_until LIMIT $2::int8 FOR UPDATE SKIP LOCKED`),
    queue === undefined ? [now, limit] : [now, limit, queue],
  );
  const changes: Change[] = [];
  const deadLettered = new Set<string>();
  const writes: RowWrite[] = [];
  for (const row of rows) {
    const from = String(row.state) as TaskState;
    const attempts = toNumber(row.attempts);
    const maxRetries = toNumber(row.max_retries);
    let walked = walk(from, ['EXPIRE'], attempts, maxRetries);
    const exhausted = walked.steps[0]!.state === 'failed-permanent';
    if (exhausted) walked = walk(from, ['EXPIRE', 'DEAD_LETTER'], attempts, maxRetries);
    const reason: TaskFailureReason = exhausted ? 'max-retries' : 'lease-expired';
    const taskQueue = String(row.queue);
    let history = '';
    let state = from;
    for (const step of walked.steps) {
      history += historyLine(now, step.state, reason, exhausted ? 'lease-expired' : undefined);
      changes.push({ queue: taskQueue, id: String(row.id), from: state, to: step.state, reason });
      state = step.state;
    }
    if (exhausted) deadLettered.add(taskQueue);
    writes.push({
      id: String(row.id),
      state,
      attempts: walked.attempts,
      runAfter: exhausted ? null : now,
      reason,
      detail: exhausted ? 'lease-expired' : null,
      finishedAt: exhausted ? now : null,
      history,
    });
  }
  await writeRows(tx, c, writes);
  return { changes, deadLettered };
}

/** Enforces a queue's dead-letter caps (age, then count, oldest first); answers what it evicted. */
export async function enforceDeadLetterCaps(
  tx: Queryable,
  c: OpsContext,
  queue: string,
  config: ResolvedTaskQueueConfig,
  now: number,
): Promise<{ id: string; cause: 'age' | 'count' }[]> {
  const t = c.tables;
  const evicted: { id: string; cause: 'age' | 'count' }[] = [];
  const aged = await tx.query(
    c.sql(`DELETE FROM ${t.tasks} WHERE queue = $1::text AND state = '${DEAD_LETTERED}' AND finished_at < $2::int8 RETURNING id`),
    [queue, now - config.deadLetterRetainMs],
  );
  for (const row of aged.rows) evicted.push({ id: String(row.id), cause: 'age' });
  const counted = await tx.query(c.sql(`SELECT count(*) AS n FROM ${t.tasks} WHERE queue = $1::text AND state = '${DEAD_LETTERED}'`), [queue]);
  const excess = toNumber(counted.rows[0]!.n) - config.deadLetterMaxEntries;
  if (excess > 0) {
    const over = await tx.query(
      c.sql(`DELETE FROM ${t.tasks} WHERE id IN (SELECT id FROM ${t.tasks} WHERE queue = $1::text AND state = '${DEAD_LETTERED}'
        ORDER BY finished_at, id LIMIT $2::int8) RETURNING id`),
      [queue, excess],
    );
    for (const row of over.rows) evicted.push({ id: String(row.id), cause: 'count' });
  }
  return evicted;
}

/**
 * The receiving side (`OplogSink`): applies a batch of one origin's entries through each model's
 * declared policy and advances that origin's persisted cursor, all in one transaction, so a batch
 * applies whole or not at all and a batch seen twice applies once (entries at or below the cursor
 * are skipped). Entries apply strictly in sequence: one past a gap stops the batch (the pull fills
 * it), as does one whose timestamp is beyond the drift cap (refused, counted; retried later).
 *
 * A remote entry whose `prev` is the key's last writer here is a successor and applies. Any other
 * against an existing key is concurrent: the policy (policies.ts) picks the winner, the loser goes
 * to the conflict log, and the conflict is an event (`onConflict`), a metric and a span (R7-6).
 */
import type { Counter, Registry } from 'prom-client';
import type { Logger } from '../../telemetry/index.js';
import { RuntimeTracer } from '../../telemetry/index.js';
import { prom } from '../../telemetry/lazy-modules.js';
import type { Transaction } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import { refuseUnknownKeys } from '../option-keys.js';
import { CONFLICT_LOG_CAPS, CONFLICT_LOG_DEFAULTS, logConflict, trimConflicts, type ConflictRecord } from './conflicts.js';
import type { ApplyResult, OplogEntry, OplogSink, SnapshotPage } from './contract.js';
import { writerId, type Oplog } from './oplog.js';
import { decide, REAL_TIMERS, type PolicyTimers } from './policies.js';
import type { ConflictSide, ReplicatedTarget } from './targets.js';
import { ApplyBatch } from './apply-batch.js';

export const ReplicationSpanName = { conflict: 'molo.replication.conflict', apply: 'molo.replication.apply' } as const;

export interface OplogApplierOptions {
  readonly targets: readonly ReplicatedTarget[];
  /** The hook policy's deadline timers (default: the real ones; tests pass a simulated clock's). */
  readonly timers?: PolicyTimers;
  /** Conflict log bounds (default and cap: 10,000 entries, 7 days). */
  readonly conflictLog?: { readonly maxEntries?: number; readonly maxAgeMs?: number };
  readonly metrics?: Registry;
  readonly logger?: Logger;
  readonly tracer?: RuntimeTracer;
}

const OPTION_KEYS = ['targets', 'timers', 'conflictLog', 'metrics', 'logger', 'tracer'];

class ReplicationMetrics {
  readonly conflicts: Counter<'model' | 'policy' | 'reason'>;
  readonly fallbacks: Counter<'model'>;
  readonly refused: Counter<'origin'>;
  readonly applied: Counter<'origin'>;
  readonly evicted: Counter;
  constructor(registry: Registry) {
    const registers = [registry];
    this.conflicts = new prom.Counter({ name: 'molo_replication_conflicts_total', help: 'Replication conflicts resolved, by model, policy and what decided.', labelNames: ['model', 'policy', 'reason'], registers });
    this.fallbacks = new prom.Counter({ name: 'molo_replication_hook_fallbacks_total', help: 'Hook resolvers that timed out or threw: LWW decided.', labelNames: ['model'], registers });
    this.refused = new prom.Counter({ name: 'molo_replication_refused_total', help: 'Remote entries refused for a timestamp beyond the drift cap.', labelNames: ['origin'], registers });
    this.applied = new prom.Counter({ name: 'molo_replication_applied_total', help: 'Remote entries applied (winners written), by origin.', labelNames: ['origin'], registers });
    this.evicted = new prom.Counter({ name: 'molo_replication_conflict_log_evicted_total', help: 'Conflict log rows removed past its age or count bound.', registers });
  }
}
const metricsByRegistry = new WeakMap<Registry, ReplicationMetrics>();

export class OplogApplier implements OplogSink {
  readonly instance: string;
  private readonly targets = new Map<string, ReplicatedTarget>();
  private readonly timers: PolicyTimers;
  private readonly maxConflicts: number;
  private readonly maxConflictAgeMs: number;
  private readonly metrics: ReplicationMetrics | undefined;
  private readonly tracer: RuntimeTracer;
  private readonly conflictListeners = new Set<(record: ConflictRecord) => void>();
  private readonly appliedListeners = new Set<(entries: readonly OplogEntry[]) => void>();
  private readonly evictedListeners = new Set<(count: number) => void>();
  /** Totals since start, for stats and the admin tree. */
  readonly totals = { applied: 0, skipped: 0, refused: 0, conflicts: 0, fallbacks: 0 };

  constructor(
    readonly oplog: Oplog,
    options: OplogApplierOptions,
  ) {
    refuseUnknownKeys('replication.sink', options, OPTION_KEYS);
    this.instance = oplog.instance;
    for (const target of options.targets) {
      this.targets.set(target.model, target);
      oplog.registerSnapshot(target);
    }
    this.timers = options.timers ?? REAL_TIMERS;
    this.maxConflicts = options.conflictLog?.maxEntries ?? CONFLICT_LOG_DEFAULTS.maxEntries;
    this.maxConflictAgeMs = options.conflictLog?.maxAgeMs ?? CONFLICT_LOG_DEFAULTS.maxAgeMs;
    if (!Number.isInteger(this.maxConflicts) || this.maxConflicts < 1 || this.maxConflicts > CONFLICT_LOG_CAPS.maxEntries) {
      throw new InvalidDataConfig('replication.conflictLog.maxEntries', `must be an integer from 1 to ${CONFLICT_LOG_CAPS.maxEntries}`);
    }
    if (!Number.isInteger(this.maxConflictAgeMs) || this.maxConflictAgeMs < 1 || this.maxConflictAgeMs > CONFLICT_LOG_CAPS.maxAgeMs) {
      throw new InvalidDataConfig('replication.conflictLog.maxAgeMs', `must be an integer from 1 to ${CONFLICT_LOG_CAPS.maxAgeMs} (7 days)`);
    }
    if (options.metrics !== undefined) {
      let m = metricsByRegistry.get(options.metrics);
      if (m === undefined) metricsByRegistry.set(options.metrics, (m = new ReplicationMetrics(options.metrics)));
      this.metrics = m;
    }
    this.tracer = options.tracer ?? new RuntimeTracer();
  }

  /** Each conflict, after its transaction committed. */
  onConflict(listener: (record: ConflictRecord) => void): () => void {
    this.conflictListeners.add(listener);
    return () => this.conflictListeners.delete(listener);
  }

  /** Entries that changed local state (winners written), after commit: what drives cache invalidation. */
  onApplied(listener: (entries: readonly OplogEntry[]) => void): () => void {
    this.appliedListeners.add(listener);
    return () => this.appliedListeners.delete(listener);
  }

  /** Conflict log rows evicted past its bounds (the event S7-8's bounded log owes). */
  onConflictsEvicted(listener: (count: number) => void): () => void {
    this.evictedListeners.add(listener);
    return () => this.evictedListeners.delete(listener);
  }

  async cursor(origin: string): Promise<number> {
    return cursorOn(this.oplog.db, origin);
  }

  async apply(origin: string, entries: readonly OplogEntry[]): Promise<ApplyResult> {
    return this.run(origin, entries, false, undefined);
  }

  async applySnapshot(origin: string, page: SnapshotPage): Promise<ApplyResult> {
    return this.run(origin, page.entries, true, page.next === null ? page.highWater : undefined);
  }

  private async run(origin: string, entries: readonly OplogEntry[], snapshot: boolean, finalCursor: number | undefined): Promise<ApplyResult> {
    const span = this.tracer.startSpan(ReplicationSpanName.apply, { 'molo.replication.origin': origin, 'molo.replication.entries': entries.length, 'molo.replication.snapshot': snapshot });
    const conflicts: ConflictRecord[] = [];
    const changed: OplogEntry[] = [];
    let applied = 0;
    let skipped = 0;
    let refused = 0;
    let fallbacks = 0;
    let evicted = 0;
    try {
      const cursor = await this.oplog.db.transaction(async (tx) => {
        let cursor = await cursorOn(tx, origin);
        // First the entries this batch may apply, in order, up to the first that stops it.
        const todo: OplogEntry[] = [];
        for (const e of entries) {
          // Attribution: a batch from `origin` carries only `origin`'s entries (the transport gives
          // `origin` from the link, never from the payload), and never this node's own.
          if (e.instance !== origin || origin === this.instance) {
            refused += 1;
            break;
          }
          if (!snapshot) {
            if (e.seq <= cursor) {
              skipped++;
              continue;
            }
            if (e.seq !== cursor + 1 + todo.length) break;
          }
          if (this.oplog.clock.accept(e.ts) === undefined) {
            refused++;
            this.metrics?.refused.inc({ origin });
            break;
          }
          todo.push(e);
        }
        const batch = new ApplyBatch(tx, this.oplog);
        await batch.prefetch(todo.filter((e) => this.targets.has(e.model)));
        for (const e of todo) {
          const outcome = await this.applyOne(batch, tx, e, snapshot);
          if (outcome.written) {
            applied++;
            changed.push(e);
          } else skipped++;
          if (outcome.conflict !== undefined) conflicts.push(outcome.conflict);
          if (outcome.fellBack) fallbacks++;
          if (!snapshot) cursor = e.seq;
        }
        await batch.flush();
        if (finalCursor !== undefined) cursor = Math.max(cursor, finalCursor);
        await tx.query(
          `INSERT INTO _molo_oplog_cursors (origin, seq) VALUES ($1, $2) ON CONFLICT (origin) DO UPDATE SET seq = excluded.seq`,
          [origin, cursor],
        );
        // The clock's high water moved with what it received: persisted with the entries applied.
        await tx.query(`UPDATE _molo_oplog_head SET hlc = CASE WHEN hlc < $2 THEN $2 ELSE hlc END WHERE instance = $1`, [this.instance, this.oplog.clock.last]);
        if (conflicts.length > 0) evicted = await trimConflicts(tx, this.oplog.nowMs(), this.maxConflicts, this.maxConflictAgeMs);
        return cursor;
      });
      span?.end(undefined, { 'molo.replication.applied': applied, 'molo.replication.conflicts': conflicts.length });
      this.after(origin, changed, conflicts, fallbacks, evicted);
      this.totals.applied += applied;
      this.totals.skipped += skipped;
      this.totals.refused += refused;
      return { applied, skipped, refused, conflicts: conflicts.length, cursor };
    } catch (error) {
      span?.end(error);
      throw error;
    }
  }

  private after(origin: string, changed: readonly OplogEntry[], conflicts: readonly ConflictRecord[], fallbacks: number, evicted: number): void {
    this.totals.conflicts += conflicts.length;
    this.totals.fallbacks += fallbacks;
    if (changed.length > 0) this.metrics?.applied.inc({ origin }, changed.length);
    for (const c of conflicts) {
      this.metrics?.conflicts.inc({ model: c.model, policy: c.policy, reason: c.reason });
      if (c.reason === 'hook-timeout') this.metrics?.fallbacks.inc({ model: c.model });
      const span = this.tracer.startSpan(ReplicationSpanName.conflict, { 'molo.replication.model': c.model, 'molo.replication.key': c.key, 'molo.replication.policy': c.policy, 'molo.replication.reason': c.reason, 'molo.replication.winner': c.winner.instance });
      span?.end();
      for (const l of this.conflictListeners) safely(() => l(c));
    }
    if (evicted > 0) {
      this.metrics?.evicted.inc(evicted);
      for (const l of this.evictedListeners) safely(() => l(evicted));
    }
    if (changed.length > 0) for (const l of this.appliedListeners) safely(() => l(changed));
  }

  private async applyOne(batch: ApplyBatch, tx: Transaction, e: OplogEntry, snapshot: boolean): Promise<{ written: boolean; conflict?: ConflictRecord; fellBack: boolean }> {
    const target = this.targets.get(e.model);
    // A model this node does not replicate: the cursor still moves past it.
    if (target === undefined) return { written: false, fellBack: false };
    const row = batch.writer(e);
    const remote: ConflictSide = { instance: e.instance, ts: e.ts, op: e.op, version: e.version, data: e.data };
    if (row === null) {
      batch.stage(target, e);
      return { written: true, fellBack: false };
    }
    if (row.ts === e.ts && row.instance === e.instance) return { written: false, fellBack: false };
    if (!snapshot) {
      // Causality before policy: a successor of what is here applies (it built on it, directly, or
      // it comes from the same origin, which had seen its own earlier write); the direct parent of
      // what is here is stale. Neither is a conflict.
      if (e.prev === writerId(row.ts, row.instance) || (e.instance === row.instance && e.ts > row.ts)) {
        batch.stage(target, e);
        return { written: true, fellBack: false };
      }
      if (row.prev === writerId(e.ts, e.instance)) return { written: false, fellBack: false };
    }
    const local: ConflictSide = { instance: row.instance, ts: row.ts, op: row.deleted ? 'delete' : 'upsert', version: row.version, data: row.deleted ? null : await batch.localData(target, e) };
    const decision = await decide(target.replicated, e.model, e.key, local, remote, this.timers);
    if (decision.winner === 'remote') batch.stage(target, e);
    if (snapshot) return { written: decision.winner === 'remote', fellBack: decision.fellBack };
    const reason = decision.fellBack ? 'hook-timeout' : target.replicated.policy === 'hook' ? 'hook' : target.replicated.policy === 'optimistic' && local.version !== remote.version ? 'version' : 'lww';
    const winner = decision.winner === 'remote' ? remote : local;
    const loser = decision.winner === 'remote' ? local : remote;
    const record: ConflictRecord = { atMs: this.oplog.nowMs(), model: e.model, key: e.key, policy: target.replicated.policy, reason, winner: { instance: winner.instance, ts: winner.ts }, loser };
    await logConflict(tx, record);
    return { written: decision.winner === 'remote', conflict: record, fellBack: decision.fellBack };
  }
}

async function cursorOn(q: { query: Transaction['query'] }, origin: string): Promise<number> {
  const row = (await q.query<{ seq: bigint | number }>(`SELECT seq FROM _molo_oplog_cursors WHERE origin = $1`, [origin])).rows[0];
  return row === undefined ? 0 : Number(row.seq);
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // A listener that throws must not undo (or hide) a batch that already committed.
  }
}

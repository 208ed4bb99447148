/**
 * One instance's oplog in a `Database` (SQLite or Postgres): `append` writes entries inside the
 * caller's transaction (the ORM's and the KV store's write transactions), so a committed change
 * always has its entry and a rolled-back one never does. It is also the `OplogSource` other nodes
 * read (by sequence, within the S7-10 caps) and the change feed applications tail (`tail`).
 *
 * Retention is bounded (`maxEntries`, default 100,000, cap 10,000,000; `maxAgeMs`, default 7 days,
 * cap 30 days): `prune` drops the oldest entries past either and records the last sequence dropped,
 * so a reader whose cursor is older gets OplogBehindRetention rather than a silent gap.
 */
import { Packr } from 'msgpackr';
import type { DataContext } from '../context.js';
import type { Database, Queryable } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import { refuseUnknownKeys } from '../option-keys.js';
import type { Row, Value } from '../values.js';
import { SYNC_BATCH_CAPS, type OplogEntry, type OplogSource, type SnapshotCursor, type SnapshotPage } from './contract.js';
import { OplogBehindRetention } from './errors.js';
import { HLC_ZERO, HybridClock } from './hlc.js';
import { oplogDdl } from './oplog-schema.js';
import type { SnapshotProvider } from './targets.js';

export const OPLOG_DEFAULTS = { maxEntries: 100_000, maxAgeMs: 7 * 24 * 3600 * 1000, pruneEvery: 1_000 } as const;
export const OPLOG_CAPS = { maxEntries: 10_000_000, maxAgeMs: 30 * 24 * 3600 * 1000, instanceBytes: 128 } as const;

/** msgpack for `data`: bigint, Date and bytes survive the trip; plain maps, no record extension. */
export const oplogPackr = new Packr({ useRecords: false, moreTypes: false, int64AsType: 'bigint', largeBigIntToFloat: false } as never);

export interface OplogOptions {
  /** This instance's id: stable across restarts, unique in the cluster (1-128 bytes). */
  readonly instance: string;
  /** Physical time for the hybrid clock and the retention age (default `Date.now`). */
  readonly now?: () => number;
  /** Accepted remote clock drift (see HybridClock). */
  readonly maxDriftMs?: number;
  readonly maxEntries?: number;
  readonly maxAgeMs?: number;
  /** Appends between opportunistic prunes (default 1,000). */
  readonly pruneEvery?: number;
  readonly ctx?: DataContext;
}

const OPTION_KEYS = ['instance', 'now', 'maxDriftMs', 'maxEntries', 'maxAgeMs', 'pruneEvery', 'ctx'];

/** An entry before it is stamped: the oplog gives it its sequence and timestamp. */
export interface PendingEntry {
  readonly model: string;
  readonly key: string;
  readonly op: 'upsert' | 'delete';
  readonly version: number;
  readonly data: Record<string, unknown> | null;
}

interface EntryRow extends Row {
  instance: string;
  seq: bigint | number;
  ts: string;
  model: string;
  key: string;
  op: string;
  version: bigint | number;
  data: Uint8Array | null;
  prev: string | null;
}

function intOption(name: string, value: number | undefined, fallback: number, max: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > max) throw new InvalidDataConfig(`replication.${name}`, `must be an integer from 1 to ${max}, got ${String(v)}`);
  return v;
}

export function rowToEntry(row: EntryRow): OplogEntry {
  const data = row.data === null || row.data === undefined ? null : (oplogPackr.unpack(row.data as Buffer) as Record<string, unknown>);
  return { seq: Number(row.seq), instance: row.instance, ts: row.ts, model: row.model, key: row.key, op: row.op as 'upsert' | 'delete', version: Number(row.version), data, ...(row.prev === null || row.prev === undefined ? {} : { prev: row.prev }) };
}

export class Oplog implements OplogSource {
  readonly instance: string;
  readonly clock: HybridClock;
  readonly maxEntries: number;
  readonly maxAgeMs: number;
  private readonly pruneEvery: number;
  private readonly now: () => number;
  private readonly listeners = new Set<(highWater: number) => void>();
  private readonly providers = new Map<string, SnapshotProvider>();
  private lastSeq = 0;
  private readOnly = false;
  private sincePrune = 0;
  private pruning: Promise<void> | undefined;
  /** Entries appended by this process (committed or not: a count for metrics, not a sequence). */
  appended = 0;

  private constructor(
    readonly db: Database,
    options: OplogOptions,
    highWater: string,
  ) {
    this.instance = options.instance;
    this.now = options.now ?? Date.now;
    this.clock = new HybridClock({ now: this.now, highWater, ...(options.maxDriftMs === undefined ? {} : { maxDriftMs: options.maxDriftMs }) });
    this.maxEntries = intOption('maxEntries', options.maxEntries, OPLOG_DEFAULTS.maxEntries, OPLOG_CAPS.maxEntries);
    this.maxAgeMs = intOption('maxAgeMs', options.maxAgeMs, OPLOG_DEFAULTS.maxAgeMs, OPLOG_CAPS.maxAgeMs);
    this.pruneEvery = intOption('pruneEvery', options.pruneEvery, OPLOG_DEFAULTS.pruneEvery, OPLOG_CAPS.maxEntries);
  }

  /** Creates the tables when missing and loads this instance's head (sequence, clock high water). */
  static async open(db: Database, options: OplogOptions): Promise<Oplog> {
    refuseUnknownKeys('replication', options, OPTION_KEYS);
    const instance = options.instance;
    if (typeof instance !== 'string' || instance.length === 0 || Buffer.byteLength(instance) > OPLOG_CAPS.instanceBytes) {
      throw new InvalidDataConfig('replication.instance', `must be a non-empty string of at most ${OPLOG_CAPS.instanceBytes} bytes`);
    }
    for (const ddl of oplogDdl(db.backend)) await db.query(ddl, undefined, options.ctx);
    await db.query(
      `INSERT INTO _molo_oplog_head (instance, seq, hlc, pruned) VALUES ($1, 0, $2, 0) ON CONFLICT (instance) DO NOTHING`,
      [instance, HLC_ZERO],
      options.ctx,
    );
    const head = (await db.query<{ seq: bigint | number; hlc: string }>(`SELECT seq, hlc FROM _molo_oplog_head WHERE instance = $1`, [instance], options.ctx)).rows[0]!;
    const oplog = new Oplog(db, options, head.hlc);
    oplog.lastSeq = Number(head.seq);
    return oplog;
  }

  /** Physical time on this oplog's clock (ms). */
  nowMs(): number {
    return this.now();
  }

  /**
   * Another instance's oplog in a shared database (Postgres), for reading only: the change feed of
   * instances that share one database (`read`, `tail`, `highWater`); `append` refuses.
   */
  static async reader(db: Database, instance: string, ctx?: DataContext): Promise<Oplog> {
    for (const ddl of oplogDdl(db.backend)) await db.query(ddl, undefined, ctx);
    const oplog = new Oplog(db, { instance }, HLC_ZERO);
    oplog.readOnly = true;
    return oplog;
  }

  /** Registers the reader of a replicated model's current state, for `snapshot`. */
  registerSnapshot(provider: SnapshotProvider): void {
    this.providers.set(provider.model, provider);
  }

  /**
   * Stamps and writes `entries` on `q`, which must be inside the transaction of the change they
   * record. Locks this instance's head row first, so the timestamps follow sequence order.
   */
  async append(q: Queryable, entries: readonly PendingEntry[], ctx?: DataContext): Promise<readonly OplogEntry[]> {
    if (entries.length === 0) return [];
    if (this.readOnly) throw new InvalidDataConfig('replication.instance', `the oplog of ${this.instance} was opened as a reader here`);
    const n = entries.length;
    // Stamped before the head is bumped: the rows were already written (and on Postgres locked), so a
    // later writer of the same key stamps after this one; the head keeps the highest stamp.
    const stamps: string[] = [];
    for (let i = 0; i < n; i++) stamps.push(this.clock.now());
    const prev = await this.lastWriters(q, entries, ctx);
    const head = await q.query<{ seq: bigint | number }>(
      `UPDATE _molo_oplog_head SET seq = seq + $2, hlc = CASE WHEN hlc < $3 THEN $3 ELSE hlc END WHERE instance = $1 RETURNING seq`,
      [this.instance, n, stamps[n - 1]!],
      ctx,
    );
    const last = Number(head.rows[0]!.seq);
    const at = this.now();
    const stamped: OplogEntry[] = [];
    const params: Value[] = [];
    const groups: string[] = [];
    for (let i = 0; i < n; i++) {
      const e = entries[i]!;
      const before = prev.get(`${e.model}\u0000${e.key}`);
      const entry: OplogEntry = {
        seq: last - n + 1 + i,
        instance: this.instance,
        ts: stamps[i]!,
        model: e.model,
        key: e.key,
        op: e.op,
        version: e.version,
        data: e.data,
        ...(before === undefined ? {} : { prev: before }),
      };
      // A key written twice in one append: the second builds on the first.
      prev.set(`${e.model}\u0000${e.key}`, writerId(entry.ts, this.instance));
      stamped.push(entry);
      const b = params.length;
      groups.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}, $${b + 9}, $${b + 10})`);
      params.push(this.instance, entry.seq, entry.ts, e.model, e.key, e.op, e.version, e.data === null ? null : oplogPackr.pack(e.data), at, entry.prev ?? null);
    }
    // 10 parameters per entry: chunks stay under the 1,024-parameter cap.
    for (let start = 0; start < groups.length; start += 100) {
      const chunk = groups.slice(start, start + 100);
      await q.query(
        `INSERT INTO _molo_oplog (instance, seq, ts, model, key, op, version, data, at_ms, prev) VALUES ${renumber(chunk, start * 10)}`,
        params.slice(start * 10, (start + chunk.length) * 10),
        ctx,
      );
    }
    await this.recordKeys(q, stamped, ctx);
    this.appended += n;
    if (last > this.lastSeq) this.lastSeq = last;
    return stamped;
  }

  /** The timestamp of each key's last accepted writer (what a new local write builds on): per model, 400 keys a statement. */
  private async lastWriters(q: Queryable, entries: readonly PendingEntry[], ctx?: DataContext): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const byModel = new Map<string, Set<string>>();
    for (const e of entries) {
      let keys = byModel.get(e.model);
      if (keys === undefined) byModel.set(e.model, (keys = new Set()));
      keys.add(e.key);
    }
    const PER = 400;
    for (const [model, keySet] of byModel) {
      const keys = [...keySet];
      for (let start = 0; start < keys.length; start += PER) {
        const chunk = keys.slice(start, start + PER);
        const rows = (
          await q.query<{ key: string; ts: string; instance: string }>(
            `SELECT key, ts, instance FROM _molo_replica_keys WHERE model = $1 AND key IN (${chunk.map((_, i) => `$${i + 2}`).join(', ')})`,
            [model, ...chunk],
            ctx,
            { maxRows: chunk.length },
          )
        ).rows;
        for (const row of rows) out.set(`${model}\u0000${row.key}`, writerId(row.ts, row.instance));
      }
    }
    return out;
  }

  /**
   * The last-writer row of each key, for the conflict policies: one multi-row upsert per 140 keys (a
   * key given twice keeps its last entry: one statement may not update a row twice on Postgres).
   */
  async recordKeys(q: Queryable, entries: readonly OplogEntry[], ctx?: DataContext): Promise<void> {
    const last = new Map<string, OplogEntry>();
    for (const e of entries) last.set(`${e.model}\u0000${e.key}`, e);
    const rows = [...last.values()];
    const PER = 140;
    for (let start = 0; start < rows.length; start += PER) {
      const chunk = rows.slice(start, start + PER);
      const params: Value[] = [];
      const groups = chunk.map((e, i) => {
        params.push(e.model, e.key, e.ts, e.instance, e.version, e.op === 'delete', e.prev ?? null);
        const b = i * 7;
        return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7})`;
      });
      await q.query(
        `INSERT INTO _molo_replica_keys (model, key, ts, instance, version, deleted, prev) VALUES ${groups.join(', ')}
         ON CONFLICT (model, key) DO UPDATE SET ts = excluded.ts, instance = excluded.instance, version = excluded.version, deleted = excluded.deleted, prev = excluded.prev`,
        params,
        ctx,
      );
    }
  }

  /** Called by the writers after their transaction committed: wakes `onAppend` listeners, prunes now and then. */
  committed(count: number): void {
    if (count === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(this.lastSeq);
      } catch {
        // A wake-up listener that throws must not fail the write that already committed.
      }
    }
    this.sincePrune += count;
    if (this.sincePrune >= this.pruneEvery && this.pruning === undefined) {
      this.sincePrune = 0;
      this.pruning = this.prune()
        .then(() => undefined, () => undefined)
        .finally(() => {
          this.pruning = undefined;
        });
    }
  }

  onAppend(listener: (highWater: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async highWater(): Promise<number> {
    const row = (await this.db.query<{ seq: bigint | number }>(`SELECT seq FROM _molo_oplog_head WHERE instance = $1`, [this.instance])).rows[0];
    return row === undefined ? 0 : Number(row.seq);
  }

  /** The last sequence retention dropped (entries from `pruned + 1` on are kept). */
  async pruned(): Promise<number> {
    const row = (await this.db.query<{ pruned: bigint | number }>(`SELECT pruned FROM _molo_oplog_head WHERE instance = $1`, [this.instance])).rows[0];
    return row === undefined ? 0 : Number(row.pruned);
  }

  async read(afterSeq: number, caps: { readonly maxEntries?: number; readonly maxBytes?: number } = {}): Promise<readonly OplogEntry[]> {
    const maxEntries = Math.min(caps.maxEntries ?? SYNC_BATCH_CAPS.maxEntries, SYNC_BATCH_CAPS.maxEntries);
    const maxBytes = Math.min(caps.maxBytes ?? SYNC_BATCH_CAPS.maxBytes, SYNC_BATCH_CAPS.maxBytes);
    const pruned = await this.pruned();
    if (afterSeq < pruned) throw new OplogBehindRetention(this.instance, afterSeq, pruned + 1);
    const rows = (
      await this.db.query<EntryRow>(
        `SELECT instance, seq, ts, model, key, op, version, data, prev FROM _molo_oplog WHERE instance = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [this.instance, afterSeq, maxEntries],
        undefined,
        { maxRows: maxEntries },
      )
    ).rows;
    const out: OplogEntry[] = [];
    let bytes = 0;
    for (const row of rows) {
      // Sized as it travels: the stored msgpack of `data` plus the fixed fields.
      const size = 64 + row.key.length + row.model.length + (row.data === null ? 0 : row.data.byteLength);
      if (out.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      out.push(rowToEntry(row));
    }
    return out;
  }

  /**
   * The change feed for applications (projections, search indexes): entries after `afterSeq`, in
   * order, batch by batch, waiting for more when caught up, until `signal` aborts.
   */
  async *tail(afterSeq: number, options: { readonly signal?: AbortSignal; readonly pollMs?: number } = {}): AsyncIterable<OplogEntry> {
    let cursor = afterSeq;
    const pollMs = options.pollMs ?? 1_000;
    while (options.signal?.aborted !== true) {
      const batch = await this.read(cursor);
      for (const entry of batch) {
        cursor = entry.seq;
        yield entry;
      }
      if (batch.length > 0) continue;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          off();
          options.signal?.removeEventListener('abort', done);
          resolve();
        };
        // The poll covers commits made through another handle (another process on the same database).
        const timer = setTimeout(done, pollMs);
        const off = this.onAppend(done);
        options.signal?.addEventListener('abort', done);
      });
    }
  }

  async snapshot(afterKey: SnapshotCursor | null, caps: { readonly maxEntries?: number; readonly maxBytes?: number } = {}): Promise<SnapshotPage> {
    const maxEntries = Math.min(caps.maxEntries ?? SYNC_BATCH_CAPS.maxEntries, SYNC_BATCH_CAPS.maxEntries);
    const highWater = await this.highWater();
    const models = [...this.providers.keys()].sort();
    // Resume at the cursor's model (or the first after it, should that model be gone).
    let index = afterKey === null ? 0 : models.findIndex((m) => m >= afterKey.model);
    let after = afterKey !== null && models[index] === afterKey.model ? afterKey.key : null;
    const entries: OplogEntry[] = [];
    let full = false;
    while (index >= 0 && index < models.length) {
      const room = maxEntries - entries.length;
      const page = await this.providers.get(models[index]!)!.page(after, room);
      for (const e of page) entries.push(e);
      if (page.length >= room) {
        full = true;
        break;
      }
      index++;
      after = null;
    }
    const lastEntry = entries[entries.length - 1];
    const next = full && lastEntry !== undefined ? { model: lastEntry.model, key: lastEntry.key } : null;
    return { entries, next, highWater };
  }

  /** Drops entries past retention (oldest first) and records the last sequence dropped. */
  async prune(): Promise<number> {
    return this.db.transaction(async (tx) => {
      const head = (await tx.query<{ seq: bigint | number; pruned: bigint | number }>(`SELECT seq, pruned FROM _molo_oplog_head WHERE instance = $1`, [this.instance])).rows[0]!;
      const byCount = Number(head.seq) - this.maxEntries;
      const aged = (await tx.query<{ s: bigint | number | null }>(`SELECT MAX(seq) AS s FROM _molo_oplog WHERE instance = $1 AND at_ms < $2`, [this.instance, this.now() - this.maxAgeMs])).rows[0]!.s;
      const cut = Math.max(byCount, aged === null ? 0 : Number(aged), Number(head.pruned));
      if (cut <= Number(head.pruned)) return 0;
      const removed = (await tx.query(`DELETE FROM _molo_oplog WHERE instance = $1 AND seq <= $2`, [this.instance, cut])).affected;
      await tx.query(`UPDATE _molo_oplog_head SET pruned = $2 WHERE instance = $1`, [this.instance, cut]);
      return removed;
    });
  }
}

/** A writer's identity as `prev` holds it: its stamp and instance (stamps alone may tie across instances). */
export function writerId(ts: string, instance: string): string {
  return `${ts}/${instance}`;
}

/** `($1, ...)` groups renumbered from `offset` to start at $1. */
function renumber(groups: readonly string[], offset: number): string {
  if (offset === 0) return groups.join(', ');
  return groups.map((g) => g.replace(/\$(\d+)/g, (_, d: string) => `$${Number(d) - offset}`)).join(', ');
}

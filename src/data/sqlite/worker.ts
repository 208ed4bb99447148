/**
 * The actor that owns one better-sqlite3 handle, placed in a worker thread so that SQLite's
 * synchronous calls never block the main event loop. The writer opens the file read-write and sets
 * the database up (WAL and the other PRAGMAs); a reader opens it read-only.
 *
 * Each call is a batch of ops (see protocol.ts), run in order, synchronously, and answered with one
 * reply frame. An op never throws out of the batch: a failure is that op's reply.
 */
import { BroadcastChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { TimerEntry } from '../../actors/index.js';
import { GenServer } from '../../behaviours/index.js';
import type { DirectReply, DirectRequest } from './direct-link.js';
import { Executor } from './executor.js';
import { runMany } from './many.js';
import type { PackedRows } from './packed-rows.js';
import { blobs } from './rows.js';
import { Answer, Fault, NO_LEASE, Op, OP_FIELDS, OpField, type BatchFrame, type CheckpointMode, type FaultReply, type ReplyFrame, type WorkerOptions } from './protocol.js';

/** Leases aborted by the read cap, remembered so that their late ops fail typed; older ones are forgotten. */
const ABORTED_LEASES_KEPT = 64;

interface ReadCapExpired {
  readonly readCapExpired: number;
}

export class SqliteWorker extends GenServer<BatchFrame, ReplyFrame, never, ReadCapExpired> {
  #db: Database.Database | undefined;
  #executor!: Executor;
  /** The pinned read (transaction or stream) this handle serves now, and its cap timer. */
  #lease = NO_LEASE;
  #leaseTimer: TimerEntry | undefined;
  readonly #aborted = new Set<number>();
  /** The direct link (direct-link.ts) and the channel generation this instance answers on it; 0: none. */
  #link: BroadcastChannel | undefined;
  #bound = 0;

  constructor(readonly options: WorkerOptions) {
    super();
  }

  override init(): void {
    const { options } = this;
    const writer = options.role === 'writer';
    const db = new Database(options.path, { readonly: !writer, fileMustExist: !writer, timeout: options.busyTimeoutMs });
    this.#db = db;
    try {
      if (writer) {
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (String(mode).toLowerCase() !== 'wal') throw new Error(`journal_mode stayed ${String(mode)}: this file cannot use WAL`);
        // FULL: the WAL is fsynced before each commit returns; NORMAL: only at checkpoints (config.ts).
        db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        db.pragma('foreign_keys = ON');
        db.pragma(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
        db.pragma(`journal_size_limit = ${options.journalSizeLimitBytes}`);
      } else if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
        throw new Error('the database is not in WAL mode (the writer sets it)');
      }
      db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
      // Every INTEGER as a bigint: nothing loses precision; rows.ts turns the safe ones into numbers.
      db.defaultSafeIntegers(true);
    } catch (error) {
      db.close();
      throw error;
    }
    this.#executor = new Executor(db, options);
    if (options.direct !== undefined) {
      this.#link = new BroadcastChannel(options.direct);
      this.#link.onmessage = this.#onDirect;
    }
  }

  /** A batch on the direct link: run as a call would be, answered on the link. Frames for another generation are another instance's. */
  readonly #onDirect = (event: unknown): void => {
    const request = (event as { data: DirectRequest | undefined }).data;
    if (request?.g !== this.#bound || this.#bound === 0) return;
    let reply: DirectReply;
    try {
      reply = { i: request.i, r: this.handleCall(request.f) };
    } catch (error) {
      reply = { i: request.i, e: error instanceof Error ? error.message : String(error) };
    }
    try {
      this.#link!.postMessage(reply);
    } catch (error) {
      this.#link!.postMessage({ i: request.i, e: `reply not sent: ${error instanceof Error ? error.message : String(error)}` } satisfies DirectReply);
    }
  };

  override handleCall(frame: BatchFrame): ReplyFrame {
    const texts = frame.t.length;
    // Columns filled by push, so that they stay packed arrays: structured clone copies a holey
    // one (`new Array(n)`) index by index, several times slower.
    const reply = { k: [] as number[], i: [] as number[], v: [] as unknown[], c: [] as string[], f: [] as (readonly string[] | null)[], b: [] as [number, bigint][], y: [] as number[] };
    for (let slot = 0; slot < texts; slot++) {
      reply.c.push('');
      reply.f.push(null);
    }
    this.#executor.startBatch(frame.t);
    try {
      this.#runBatch(frame, reply);
    } finally {
      this.#executor.endSharedRead();
    }
    const { k, i, v, c, f, b, y } = reply;
    // Absent when empty: each object costs the clone on both sides.
    if (b.length === 0) return y.length === 0 ? { k, i, v, c, f } : { k, i, v, c, f, y };
    return y.length === 0 ? { k, i, v, c, f, b } : reply;
  }

  #runBatch(frame: BatchFrame, reply: Required<ReplyFrame>): void {
    const { k: answers, i: insertIds, v: values, c: commands, f: columns, b: bigIds, y: withBlobs } = reply;
    const { o: ops, t: texts, p: params, d: deadlines, x: args } = frame;
    const size = deadlines.length;
    const executor = this.#executor;
    let offset = 0;
    for (let i = 0, at = 0; i < size; i++, at += OP_FIELDS) {
      const kind = ops[at + OpField.Kind]!;
      const slot = ops[at + OpField.Slot]!;
      const count = ops[at + OpField.Count]!;
      const limit = ops[at + OpField.Limit]!;
      const lease = ops[at + OpField.Lease]!;
      const first = offset;
      offset += count;
      if (kind === Op.Skip) {
        answers.push(Answer.Skipped, 0);
        insertIds.push(NaN);
        continue;
      }
      let value: unknown;
      let affected = 0;
      let insertId = NaN;
      try {
        if (kind === Op.Query && lease === NO_LEASE) executor.shareRead();
        else executor.endSharedRead();
        if (kind === Op.Query) {
          const entry = executor.statementAt(slot);
          commands[slot] = entry.command;
          columns[slot] = entry.columns ?? null;
          blobs.seen = false;
          value = this.#leased(lease) ?? executor.query(entry, params, first, count, limit, deadlines[i]!);
          affected = executor.affected;
          const id = executor.lastInsertId;
          if (typeof id === 'bigint') bigIds.push([i, id]);
          else if (id !== null) insertId = id;
          if (blobs.seen) withBlobs.push(i);
        } else if (kind === Op.StreamOpen) {
          value = this.#leased(lease) ?? executor.streamOpen(texts[slot]!, count === 0 ? undefined : params.slice(first, first + count), limit, deadlines[i]!, lease);
        } else {
          value = this.#run(kind, args![slot]!, lease, deadlines[i]!, executor);
        }
      } catch (error) {
        value = executor.fault(error);
        insertId = NaN;
      }
      insertIds.push(insertId);
      if (value === undefined) answers.push(Answer.Done, affected);
      else {
        answers.push(Answer.Value, affected);
        values.push(value);
      }
    }
  }

  #run(kind: number, args: unknown[], lease: number, deadline: number, executor: Executor): unknown {
    switch (kind) {
      case Op.StreamNext:
        return this.#leased(lease) ?? executor.streamNext(args[0] as number, args[1] as number, deadline);
      case Op.StreamClose:
        executor.streamClose(args[0] as number);
        return true;
      case Op.More:
        return executor.more(args[0] as number);
      case Op.Prepare:
        return executor.prepare(args[0] as string);
      case Op.Unprepare:
        executor.unprepare(args[0] as string);
        return true;
      case Op.Checkpoint:
        return executor.checkpoint(args[0] as CheckpointMode, args[1] as number);
      case Op.EndLease:
        this.#endLease(lease);
        return true;
      case Op.Ping:
        return true;
      case Op.Many:
        return this.#leased(lease) ?? runMany(executor, args[0] as string, args[1] as PackedRows, args[2] as number, deadline, args[3] === true);
      case Op.Bind:
        this.#bound = this.#link === undefined ? 0 : (args[0] as number);
        return this.#bound !== 0;
      default:
        return { e: `unknown op ${kind}`, x: Fault.Internal } satisfies FaultReply;
    }
  }

  /** Tracks the pinned read an op belongs to; a fault when the read cap has already ended it. */
  #leased(lease: number): FaultReply | undefined {
    if (lease === NO_LEASE) return undefined;
    if (this.#aborted.has(lease)) return this.#readTooLong();
    if (lease !== this.#lease) {
      this.#endLease(this.#lease);
      this.#lease = lease;
      // Positive leases are reads, capped; negative ones (sessions, the writer's pinned work) are not.
      if (lease > 0) this.#leaseTimer = this.ctx.sendAfter(this.options.maxReadMs, { readCapExpired: lease } satisfies ReadCapExpired);
    }
    return undefined;
  }

  #readTooLong(): FaultReply {
    const { maxReadMs } = this.options;
    return { e: `read transaction or stream open longer than maxReadMs (${maxReadMs} ms): rolled back so WAL checkpoints can complete`, x: Fault.ReadTooLong, n: maxReadMs };
  }

  /** The pinned read is over: close what it left open. */
  #endLease(lease: number): void {
    this.#aborted.delete(lease);
    if (lease === NO_LEASE || lease !== this.#lease) return;
    if (this.#leaseTimer !== undefined) this.ctx.cancelTimer(this.#leaseTimer);
    this.#leaseTimer = undefined;
    this.#lease = NO_LEASE;
    this.#executor.releaseLease(lease);
  }

  override handleInfo(message: unknown): void {
    const lease = (message as Partial<ReadCapExpired>)?.readCapExpired;
    if (typeof lease !== 'number' || lease !== this.#lease) return;
    // The read stayed open past the cap: end it here, whatever the main thread does, so the WAL
    // can be checkpointed; its later ops fail with ReadTooLong.
    this.#leaseTimer = undefined;
    this.#lease = NO_LEASE;
    this.#executor.releaseLease(lease);
    this.#aborted.add(lease);
    if (this.#aborted.size > ABORTED_LEASES_KEPT) this.#aborted.delete(this.#aborted.values().next().value!);
  }

  override terminate(): void {
    this.#link?.close();
    this.#link = undefined;
    this.#executor?.closeAll();
    this.#db?.close();
  }
}

/** The export `spawnPlaced` names: a fresh server per actor. */
export const sqliteWorker = (options: WorkerOptions) => GenServer.behaviour(() => new SqliteWorker(options));




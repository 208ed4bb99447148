/**
 * The main thread's side of `queryMany`: the rows are encoded into packed chunks (Op.Many: one op
 * and one reply per chunk, the rows in typed columns, see packed-rows.ts and many.ts), each sent
 * as soon as it is full so that the worker runs one while the next is encoded; one request object
 * and one promise for all. Asked for totals only, the worker answers each chunk with two numbers
 * and no result is built per row.
 */
import type { DataContext } from '../context.js';
import { RowTooLarge } from '../errors.js';
import type { ManyTotals } from '../database.js';
import type { Result, Value } from '../values.js';
import { TransportFailure, type Request, type WorkerChannel } from './channel.js';
import type { FailureSite, FaultMapper, StatementMode } from './faults.js';
import { RowPacker } from './packed-rows.js';
import { isFault, Op, type ManyReply, type ManyTotalsReply, type ParkedRows, type ReplyFrame } from './protocol.js';
import { fieldsOf, NO_FIELDS, result } from './result.js';
import { restoreBlobs } from './rows.js';

/** Rows per chunk at most: bounds the worker's time on one op and the main thread's wait for its first results. */
const MAX_CHUNK_ROWS = 8_192;
/** Rows of the first chunk; each next one doubles up to the cap, so the worker starts early. */
const FIRST_CHUNK_ROWS = 512;
/** Bytes of framing per chunk beyond its SQL and its rows. */
const CHUNK_BYTES = 64;

/** What a ManyRequest needs of the engine. */
export interface ManyEngine {
  readonly faults: FaultMapper;
  fetchParked(channel: WorkerChannel, id: number, generation: number, site: FailureSite): Promise<Record<string, unknown>[]>;
}

export interface ManyTarget {
  readonly channel: WorkerChannel;
  readonly generation: number;
  readonly lease: number;
  readonly mode: StatementMode;
}

/**
 * Queues `rows` in chunks on `target.channel` (in order: they run in order); `settle` gets every
 * result in row order (`totals`: the totals instead), `fail` the first failure. Encoding failures
 * (EncodeFailed, TooManyParameters, a row over the payload cap: RowTooLarge, QueueFull) fail it at once.
 */
export function queueMany(
  engine: ManyEngine,
  target: ManyTarget,
  sql: string,
  rows: readonly (readonly Value[])[],
  ctx: DataContext | undefined,
  timeoutMs: number,
  maxRows: number,
  totals: boolean,
  settle: (answer: Result[] | ManyTotals) => void,
  fail: (error: unknown) => void,
): void {
  const many = new ManyRequest(engine, target, sql, rows.length, ctx, timeoutMs, totals, settle, fail);
  const { channel } = target;
  const budget = channel.budgetBytes;
  const base = CHUNK_BYTES + 5 + sql.length * 3;
  // A chunk is sent once it passes half the budget: two fit in one frame, and none is over.
  const sendAt = Math.max(base + 1, budget >> 1);
  let packer: RowPacker | undefined;
  let bytes = base;
  let chunkRows = FIRST_CHUNK_ROWS;
  const send = (): void => {
    channel.op(many, Op.Many, [sql, packer!.seal(), maxRows, totals], bytes, many.deadline, target.lease, true);
    packer = undefined;
    bytes = base;
    chunkRows = Math.min(MAX_CHUNK_ROWS, chunkRows * 2);
  };
  try {
    for (let i = 0; i < rows.length && !many.failed; i++) {
      const row = rows[i]!;
      many.params = row;
      packer ??= new RowPacker(Math.min(chunkRows, rows.length - i), row);
      let rowBytes = packer.add(row, budget - bytes);
      if (bytes + rowBytes > budget) {
        if (base + rowBytes > budget) throw new RowTooLarge(base + rowBytes, budget);
        // This row would push the chunk over the cap: it starts the next one.
        send();
        packer = new RowPacker(Math.min(chunkRows, rows.length - i), row);
        rowBytes = packer.add(row, budget - bytes);
      }
      bytes += rowBytes;
      if (bytes >= sendAt || packer.rows >= chunkRows) send();
    }
    if (packer !== undefined && packer.rows > 0 && !many.failed) send();
  } catch (error) {
    many.reject(error);
  } finally {
    many.params = undefined;
  }
}

/**
 * The rows of one `queryMany`: one request object listed once per chunk in the channel's batches
 * (answers come in issue order), one array of results, one promise. A fault fails the whole call;
 * a result parked for being too large is fetched like a single statement's.
 */
class ManyRequest implements Request, FailureSite {
  readonly deadline: number;
  readonly generation: number;
  /** Filled in row order, so it stays a fast array (one preallocated this large would be a dictionary). */
  readonly results: Result[] = [];
  readonly channel: WorkerChannel;
  readonly mode: StatementMode;
  /** The row being queued, for a failure's site while queuing. */
  params: readonly Value[] | undefined;
  failed = false;
  #answered = 0;
  #affected = 0;
  #waiting = 0;

  constructor(
    readonly engine: ManyEngine,
    target: ManyTarget,
    readonly sql: string,
    readonly count: number,
    readonly ctx: DataContext | undefined,
    readonly timeoutMs: number,
    readonly totals: boolean,
    readonly settle: (answer: Result[] | ManyTotals) => void,
    readonly fail: (error: unknown) => void,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.generation = target.generation;
    this.channel = target.channel;
    this.mode = target.mode;
  }

  get role(): string {
    return this.channel.label;
  }

  answer(_frame: ReplyFrame, _index: number, value: unknown, _slot: number, generation: number): void {
    if (this.failed) return;
    if (isFault(value)) return this.reject(this.engine.faults.fault(value, this));
    if (this.totals) {
      const { r: rows, t: affected } = value as ManyTotalsReply;
      this.#answered += rows;
      this.#affected += affected;
      return this.#maybeDone();
    }
    const reply = value as ManyReply;
    const { a: affected, v: values, c: command } = reply;
    const fields = values === undefined ? NO_FIELDS : fieldsOf(reply.f);
    const results = this.results;
    for (let j = 0; j < affected.length; j++) {
      const at = this.#answered++;
      const rows = values?.[j];
      const lastInsertId = insertIdOf(reply, j);
      if (rows === undefined) results.push(result([], affected[j]!, lastInsertId, command, NO_FIELDS));
      else if (Array.isArray(rows)) {
        if (reply.y.length > 0 && reply.y.includes(j)) restoreBlobs(rows);
        results.push(result(rows, affected[j]!, lastInsertId, command, fields));
      } else {
        results.push(result([], affected[j]!, lastInsertId, command, fields));
        this.#fetch(at, (rows as ParkedRows).parked, generation);
      }
    }
    this.#maybeDone();
  }

  /** Row `at`'s rows, parked on the worker for being too large for the reply, into its result. */
  #fetch(at: number, parked: number, generation: number): void {
    this.#waiting++;
    this.engine.fetchParked(this.channel, parked, generation, this).then(
      (rows) => {
        (this.results[at] as { rows: unknown[] }).rows = rows;
        this.#waiting--;
        this.#maybeDone();
      },
      (error: unknown) => this.reject(error),
    );
  }

  #maybeDone(): void {
    if (this.failed || this.#answered !== this.count || this.#waiting !== 0) return;
    this.settle(this.totals ? { count: this.count, affected: this.#affected } : this.results);
  }

  reject(failure: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.fail(failure instanceof TransportFailure ? this.engine.faults.transport(failure, this) : failure);
  }
}

/** Row `j`'s insert rowid: its number, or (NaN) none or a bigint listed in `b`. */
function insertIdOf(reply: ManyReply, j: number): number | bigint | null {
  const id = reply.i[j]!;
  if (id === id) return id;
  for (const [at, big] of reply.b) if (at === j) return big;
  return null;
}

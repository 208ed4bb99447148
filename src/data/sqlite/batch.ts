/**
 * A batch being filled on the main thread: each op is written into columns as it is issued (its
 * parameters copied into the flat parameter array then and there, so the caller may reuse its
 * array at once), and the columns become typed arrays when the batch is sent.
 */
import { Op, type BatchFrame, type SqliteParam } from './protocol.js';

/** A growable column of numbers. */
class Column<T extends Uint8Array | Uint16Array | Int32Array | Float64Array> {
  length = 0;
  constructor(public data: T) {}

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new (this.data.constructor as new (length: number) => T)(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

const INITIAL = 16;

export class BatchBuilder {
  readonly kinds = new Column(new Uint8Array(INITIAL));
  readonly slots = new Column(new Int32Array(INITIAL));
  readonly counts = new Column(new Uint16Array(INITIAL));
  readonly deadlines = new Column(new Float64Array(INITIAL));
  readonly limits = new Column(new Int32Array(INITIAL));
  readonly leases = new Column(new Int32Array(INITIAL));
  readonly generations = new Column(new Int32Array(INITIAL));
  readonly texts: string[] = [];
  readonly #textSlots = new Map<string, number>();
  readonly params: SqliteParam[] = [];
  readonly args: unknown[][] = [];
  /** Upper bound of the encoded size. */
  bytes = 64;

  get size(): number {
    return this.kinds.length;
  }

  /** A statement (Query or StreamOpen) whose `count` parameters were just appended to `params`. */
  statement(kind: number, sql: string, count: number, valueBytes: number, limit: number, deadline: number, lease: number, generation: number): void {
    let slot = this.#textSlots.get(sql);
    if (slot === undefined) {
      slot = this.texts.length;
      this.texts.push(sql);
      this.#textSlots.set(sql, slot);
      this.bytes += 5 + sql.length * 3;
    }
    this.kinds.push(kind);
    this.slots.push(slot);
    this.counts.push(count);
    this.deadlines.push(deadline);
    this.limits.push(limit);
    this.leases.push(lease);
    this.generations.push(generation);
    this.bytes += 24 + valueBytes;
  }

  /** Any other op, with its arguments. */
  op(kind: number, args: unknown[], argBytes: number, deadline: number, lease: number, generation: number): void {
    this.kinds.push(kind);
    this.slots.push(this.args.length);
    this.args.push(args);
    this.counts.push(0);
    this.deadlines.push(deadline);
    this.limits.push(0);
    this.leases.push(lease);
    this.generations.push(generation);
    this.bytes += 24 + argBytes;
  }

  /** Bytes a statement would add (its SQL counts once per batch). */
  statementBytes(sql: string, valueBytes: number): number {
    return 24 + valueBytes + (this.#textSlots.has(sql) ? 0 : 5 + sql.length * 3);
  }

  skip(index: number): void {
    this.kinds.data[index] = Op.Skip;
  }

  frame(): BatchFrame {
    return {
      k: this.kinds.view(),
      s: this.slots.view(),
      t: this.texts,
      p: this.params,
      n: this.counts.view(),
      d: this.deadlines.view(),
      m: this.limits.view(),
      l: this.leases.view(),
      x: this.args,
    };
  }
}

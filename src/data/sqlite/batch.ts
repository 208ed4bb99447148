/**
 * A batch being filled on the main thread: each op is written into columns as it is issued (its
 * parameters copied into the flat parameter array then and there, so the caller may reuse its
 * array at once); the columns go as they are when the batch is sent.
 */
import { Op, type BatchFrame, type SqliteParam } from './protocol.js';

/**
 * A column of numbers: a plain array, not a typed one. Structured clone (the direct link) copies a
 * small plain array for much less than a typed array, whose ArrayBuffer it allocates and tracks
 * again on the other thread: seven of them cost an awaited statement some 20 µs of CPU.
 */
class Column {
  readonly data: number[] = [];

  get length(): number {
    return this.data.length;
  }

  push(value: number): void {
    this.data.push(value);
  }
}

export class BatchBuilder {
  readonly kinds = new Column();
  readonly slots = new Column();
  readonly counts = new Column();
  readonly deadlines = new Column();
  readonly limits = new Column();
  readonly leases = new Column();
  readonly generations = new Column();
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
      k: this.kinds.data,
      s: this.slots.data,
      t: this.texts,
      p: this.params,
      n: this.counts.data,
      d: this.deadlines.data,
      m: this.limits.data,
      l: this.leases.data,
      x: this.args,
    };
  }
}

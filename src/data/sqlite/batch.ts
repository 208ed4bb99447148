/**
 * A batch being filled on the main thread: each op is written into columns as it is issued (its
 * parameters copied into the flat parameter array then and there, so the caller may reuse its
 * array at once); the columns go as they are when the batch is sent.
 */
import { Op, type BatchFrame, type SqliteParam } from './protocol.js';

/** Distinct SQL texts a batch finds by scanning before it keeps a map of them. */
const SCANNED_TEXTS = 8;

/**
 * The columns are plain arrays of numbers, not typed ones: structured clone (the direct link)
 * copies a small plain array for much less than a typed array, whose ArrayBuffer it allocates and
 * tracks again on the other thread (seven of them cost an awaited statement some 20 µs of CPU).
 */
export class BatchBuilder {
  readonly kinds: number[] = [];
  readonly slots: number[] = [];
  readonly counts: number[] = [];
  readonly deadlines: number[] = [];
  readonly limits: number[] = [];
  readonly leases: number[] = [];
  /** Main thread only: the worker generation each op is bound to (0: any). */
  readonly generations: number[] = [];
  readonly texts: string[] = [];
  /** Slots by SQL text once a batch has more than a few texts; below that a scan of `texts` is cheaper. */
  #textSlots: Map<string, number> | undefined;
  readonly params: SqliteParam[] = [];
  readonly args: unknown[][] = [];
  /** Upper bound of the encoded size. */
  bytes = 64;

  get size(): number {
    return this.kinds.length;
  }

  /** A statement (Query or StreamOpen) whose `count` parameters were just appended to `params`. */
  statement(kind: number, sql: string, count: number, valueBytes: number, limit: number, deadline: number, lease: number, generation: number): void {
    let slot = this.#slotOf(sql);
    if (slot < 0) {
      slot = this.texts.length;
      this.texts.push(sql);
      if (this.#textSlots !== undefined) this.#textSlots.set(sql, slot);
      else if (slot >= SCANNED_TEXTS) this.#textSlots = new Map(this.texts.map((text, at) => [text, at]));
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
    return 24 + valueBytes + (this.#slotOf(sql) >= 0 ? 0 : 5 + sql.length * 3);
  }

  #slotOf(sql: string): number {
    return this.#textSlots === undefined ? this.texts.indexOf(sql) : (this.#textSlots.get(sql) ?? -1);
  }

  skip(index: number): void {
    this.kinds[index] = Op.Skip;
  }

  frame(): BatchFrame {
    // In OpField order, filled by push: a packed array, which structured clone copies densely (a holey one it copies index by index).
    const ops: number[] = [];
    for (let i = 0; i < this.kinds.length; i++) ops.push(this.kinds[i]!, this.slots[i]!, this.counts[i]!, this.limits[i]!, this.leases[i]!);
    const frame = { o: ops, t: this.texts, p: this.params, d: this.deadlines };
    return this.args.length === 0 ? frame : { ...frame, x: this.args };
  }
}

/**
 * The rows of one queryMany chunk as they cross the hop: numbers in a Float64Array, texts in an
 * array of strings, anything else (null, bigint, BLOB) in a third array, and a tag per parameter
 * saying which. A plain array mixing numbers and strings costs the receiving thread — the writer,
 * the busy side of a bulk load — several times more to deserialize than these (each number boxed,
 * one element at a time); a large typed array is one copy. A small chunk keeps plain arrays, whose
 * clone costs less than allocating and tracking an ArrayBuffer (batch.ts).
 */
import { MAX_PARAMETERS } from '../database.js';
import { EncodeFailed, TooManyParameters } from '../errors.js';
import type { Value } from '../values.js';
import { checkInteger, encodeObject } from './params.js';
import type { SqliteParam } from './protocol.js';

/** Where a parameter's value is. */
const NUMBER = 0;
const TEXT = 1;
const OTHER = 2;

/** Rows from which a chunk's columns are typed arrays. */
export const TYPED_FROM_ROWS = 64;
/** Parameters a typed chunk has room for at first at most; wider rows grow it. */
const FIRST_CAPACITY_PARAMS = 65_536;
/** Bytes of framing per row (its parameter count, and the like). */
const ROW_BYTES = 13;

type Column = Float64Array | Uint8Array | Uint16Array | number[];

/** Op.Many's rows (x[1]). */
export interface PackedRows {
  /** Parameters per row. */
  readonly c: Uint16Array | number[];
  /** Per parameter in row order: 0: the next of `n`, 1: the next of `s`, 2: the next of `o`. */
  readonly t: Uint8Array | number[];
  readonly n: Float64Array | number[];
  readonly s: string[];
  readonly o: SqliteParam[];
}

/** Main thread: encodes rows (checked as a lone statement's parameters are, params.ts) into one chunk. */
export class RowPacker {
  rows = 0;
  #params = 0;
  #numbers = 0;
  #counts: Uint16Array | number[];
  #tags: Uint8Array | number[];
  #nums: Float64Array | number[];
  readonly #texts: string[] = [];
  readonly #others: SqliteParam[] = [];
  readonly #typed: boolean;

  /** At most `expectedRows` rows, shaped about like `first`: sizes the columns, so a full chunk goes without a copy. */
  constructor(expectedRows: number, first: readonly Value[]) {
    this.#typed = expectedRows >= TYPED_FROM_ROWS;
    if (!this.#typed) {
      this.#counts = [];
      this.#tags = [];
      this.#nums = [];
      return;
    }
    const width = Array.isArray(first) ? first.length : 0;
    let numeric = 0;
    for (let i = 0; i < width; i++) if (typeof first[i] === 'number' || typeof first[i] === 'boolean') numeric++;
    this.#counts = new Uint16Array(expectedRows);
    this.#tags = new Uint8Array(Math.min(expectedRows * width, FIRST_CAPACITY_PARAMS));
    this.#nums = new Float64Array(Math.min(expectedRows * numeric, FIRST_CAPACITY_PARAMS));
  }

  /**
   * Appends `row` unless its bytes (an upper bound of their encoded size) are over `room`; returns
   * them either way. Throws EncodeFailed or TooManyParameters, leaving nothing appended.
   */
  add(row: readonly Value[], room: number): number {
    if (!Array.isArray(row)) throw new EncodeFailed('parameters must be an array');
    const count = row.length;
    if (count > MAX_PARAMETERS) throw new TooManyParameters(count, MAX_PARAMETERS);
    if (this.#typed) this.#reserve(count);
    const tags = this.#tags;
    const nums = this.#nums;
    const texts = this.#texts;
    const params = this.#params;
    const numbers = this.#numbers;
    const textCount = texts.length;
    const otherCount = this.#others.length;
    let at = params;
    let bytes = ROW_BYTES;
    try {
      for (let i = 0; i < count; i++) {
        const value: unknown = row[i];
        if (typeof value === 'number') {
          tags[at++] = NUMBER;
          nums[this.#numbers++] = value;
          bytes += 9;
        } else if (typeof value === 'string') {
          tags[at++] = TEXT;
          texts.push(value);
          bytes += 5 + value.length * 3;
        } else if (typeof value === 'boolean') {
          tags[at++] = NUMBER;
          nums[this.#numbers++] = value ? 1 : 0;
          bytes += 9;
        } else {
          const other = encodeOther(value, i);
          if (typeof other === 'string') {
            tags[at++] = TEXT;
            texts.push(other);
            bytes += 5 + other.length * 3;
          } else {
            tags[at++] = OTHER;
            this.#others.push(other);
            bytes += other === null ? 1 : typeof other === 'bigint' ? 9 : 5 + (other as Uint8Array).byteLength;
          }
        }
      }
    } catch (error) {
      this.#rollBack(numbers, textCount, otherCount);
      throw error;
    }
    if (bytes > room) {
      this.#rollBack(numbers, textCount, otherCount);
      return bytes;
    }
    this.#params = at;
    this.#counts[this.rows++] = count;
    return bytes;
  }

  /** The chunk, to send; the packer is spent. */
  seal(): PackedRows {
    const { rows } = this;
    const params = this.#params;
    const numbers = this.#numbers;
    return {
      c: trimmed(this.#counts, rows),
      t: trimmed(this.#tags, params),
      n: trimmed(this.#nums, numbers),
      s: this.#texts,
      o: this.#others,
    };
  }

  #rollBack(numbers: number, texts: number, others: number): void {
    this.#numbers = numbers;
    this.#texts.length = texts;
    this.#others.length = others;
  }

  /** Room in the typed columns for one more row of `count` parameters. */
  #reserve(count: number): void {
    if (this.rows >= this.#counts.length) this.#counts = grown(this.#counts as Uint16Array, this.rows + 1);
    if (this.#params + count > this.#tags.length) this.#tags = grown(this.#tags as Uint8Array, this.#params + count);
    if (this.#numbers + count > this.#nums.length) this.#nums = grown(this.#nums as Float64Array, this.#numbers + count);
  }
}

/** Worker: the rows of a chunk, one at a time, in order. */
export class RowReader {
  #tag = 0;
  #number = 0;
  #text = 0;
  #other = 0;

  constructor(readonly rows: PackedRows) {}

  /** The next row's `count` parameters into `into`, from index 0. */
  next(into: SqliteParam[], count: number): void {
    const { t: tags, n: nums, s: texts, o: others } = this.rows;
    for (let i = 0; i < count; i++) {
      const tag = tags[this.#tag++];
      into[i] = tag === NUMBER ? nums[this.#number++]! : tag === TEXT ? texts[this.#text++]! : others[this.#other++]!;
    }
    if (into.length !== count) into.length = count;
  }
}

/** A value that is neither a number, a string nor a boolean, as SQLite stores it (params.ts). */
function encodeOther(value: unknown, index: number): SqliteParam {
  if (value === undefined) return null;
  if (typeof value === 'bigint') return checkInteger(value, index);
  if (typeof value === 'object') return encodeObject(value, index);
  throw new EncodeFailed(`parameter $${index + 1}: a ${typeof value} cannot be stored`);
}

function grown<T extends Float64Array | Uint8Array | Uint16Array>(column: T, needed: number): T {
  const next = new (column.constructor as new (length: number) => T)(Math.max(needed, column.length * 4));
  next.set(column);
  return next;
}

/** The first `length` entries: a typed column is copied only when not full, a plain one cut. */
function trimmed<T extends Column>(column: T, length: number): T {
  if (Array.isArray(column)) {
    column.length = length;
    return column;
  }
  return (column.length === length ? column : column.slice(0, length)) as T;
}

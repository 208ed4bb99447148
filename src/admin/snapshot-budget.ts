/**
 * S7-10: a supervisor status snapshot is at most 1 MiB. Snapshots are built against a byte budget
 * so that a tree of a million children stops growing at the cap instead of after it; what does not
 * fit is left out and the snapshot says `truncated: true`.
 */

/** The cap of every admin snapshot (tree or process list), in bytes of UTF-8 JSON. */
export const MAX_SNAPSHOT_BYTES = 1_048_576;
/** The smallest cap a caller may set (tests use small caps to exercise truncation). */
export const MIN_SNAPSHOT_BYTES = 4_096;
/** Bytes kept back for the snapshot's own fields (node, takenAt, flags, counters). */
const ENVELOPE_RESERVE_BYTES = 1_024;

/** UTF-8 size of `value` as JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/** A running total of the JSON bytes a snapshot has taken so far. */
export class ByteBudget {
  readonly #limit: number;
  #used = 0;
  #exhausted = false;

  constructor(maxBytes: number) {
    this.#limit = maxBytes - ENVELOPE_RESERVE_BYTES;
  }

  /**
   * Charges the JSON size of `value` plus a separator; returns false, charging nothing, when it
   * does not fit. After the first refusal the budget stays exhausted, so nothing smaller sneaks in
   * after a larger item was left out (the snapshot keeps a prefix, not a sample).
   */
  take(value: unknown): boolean {
    if (this.#exhausted) return false;
    const bytes = jsonBytes(value) + 1;
    if (this.#used + bytes > this.#limit) {
      this.#exhausted = true;
      return false;
    }
    this.#used += bytes;
    return true;
  }

  get exhausted(): boolean {
    return this.#exhausted;
  }

  get used(): number {
    return this.#used;
  }
}

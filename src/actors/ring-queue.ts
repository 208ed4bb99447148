const INITIAL_SLOTS = 8;
/**
 * Below this many slots a full queue grows fourfold, above it twofold: a mailbox that fills at all
 * usually fills well past 8 (a burst of sends before the actor runs), and each doubling is an
 * allocation and a copy the collector then has to trace (10,000 busy actors paid four each).
 */
const FAST_GROWTH_BELOW = 1_024;

/**
 * A growable ring buffer: O(1) push and shift, and removal at an index (for selective receive,
 * which keeps every other message in order). Starts at 8 slots, so an idle queue stays small.
 */
export class RingQueue<T> {
  #slots: (T | undefined)[] = new Array(INITIAL_SLOTS);
  #head = 0;
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(item: T): void {
    if (this.#length === this.#slots.length) this.#grow();
    this.#slots[(this.#head + this.#length) & (this.#slots.length - 1)] = item;
    this.#length++;
  }

  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#slots[this.#head];
    this.#slots[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#slots.length - 1);
    this.#length--;
    return item;
  }

  /** Index of the first message matching `predicate`, or -1. */
  findIndex(predicate: (item: T) => boolean): number {
    const mask = this.#slots.length - 1;
    for (let i = 0; i < this.#length; i++) {
      if (predicate(this.#slots[(this.#head + i) & mask] as T)) return i;
    }
    return -1;
  }

  /** Removes and returns the message at `index` (0 = oldest), closing the gap in order. */
  removeAt(index: number): T {
    const mask = this.#slots.length - 1;
    const item = this.#slots[(this.#head + index) & mask] as T;
    for (let i = index; i < this.#length - 1; i++) {
      this.#slots[(this.#head + i) & mask] = this.#slots[(this.#head + i + 1) & mask];
    }
    this.#slots[(this.#head + this.#length - 1) & mask] = undefined;
    this.#length--;
    return item;
  }

  clear(): void {
    this.#slots = new Array(INITIAL_SLOTS);
    this.#head = 0;
    this.#length = 0;
  }

  #grow(): void {
    const old = this.#slots;
    const next: (T | undefined)[] = new Array(old.length < FAST_GROWTH_BELOW ? old.length * 4 : old.length * 2);
    for (let i = 0; i < this.#length; i++) next[i] = old[(this.#head + i) & (old.length - 1)];
    this.#slots = next;
    this.#head = 0;
  }
}

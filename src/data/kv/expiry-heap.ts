/**
 * The memory store's expiry order: a binary min-heap of the entries that have a TTL, each entry
 * knowing its own position, so an overwrite or delete fixes the heap in O(log n) and no stale
 * record ever piles up (nothing to compact, nothing unbounded).
 */

export interface Expiring {
  /** Expiry time, ms since the epoch on the store's clock. */
  expiresAt: number;
  /** Position in the heap; -1 when not in it. */
  heapIndex: number;
}

export class ExpiryHeap<T extends Expiring> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** The entry that expires first. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds `item`, or moves it after its `expiresAt` changed. */
  upsert(item: T): void {
    if (item.heapIndex < 0) {
      item.heapIndex = this.#items.length;
      this.#items.push(item);
      this.#up(item.heapIndex);
    } else {
      this.#up(item.heapIndex);
      this.#down(item.heapIndex);
    }
  }

  remove(item: T): void {
    const index = item.heapIndex;
    if (index < 0) return;
    const items = this.#items;
    const last = items.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
    items[index] = last;
    last.heapIndex = index;
    this.#up(index);
    this.#down(index);
  }

  clear(): void {
    for (const item of this.#items) item.heapIndex = -1;
    this.#items.length = 0;
  }

  #up(index: number): void {
    const items = this.#items;
    const item = items[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = items[parent]!;
      if (above.expiresAt <= item.expiresAt) break;
      items[index] = above;
      above.heapIndex = index;
      index = parent;
    }
    items[index] = item;
    item.heapIndex = index;
  }

  #down(index: number): void {
    const items = this.#items;
    const length = items.length;
    const item = items[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && items[right]!.expiresAt < items[left]!.expiresAt ? right : left;
      const below = items[child]!;
      if (below.expiresAt >= item.expiresAt) break;
      items[index] = below;
      below.heapIndex = index;
      index = child;
    }
    items[index] = item;
    item.heapIndex = index;
  }
}

/**
 * A least-recently-used map with a hard cap: the worker's prepared statements by SQL text, and the
 * main thread's memory of which SQL texts only read. Map keeps insertion order, so the first key is
 * the least recently used; a hit on the most recent key skips the reinsertion (the common case of
 * one statement run many times in a row).
 */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();
  #last: K | undefined;

  constructor(
    readonly capacity: number,
    /** Called for each entry pushed out by the cap or removed with `delete`. */
    readonly onEvict?: (key: K, value: V) => void,
  ) {}

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined && key !== this.#last) {
      this.#map.delete(key);
      this.#map.set(key, value);
      this.#last = key;
    }
    return value;
  }

  set(key: K, value: V): void {
    if (this.#map.has(key)) this.#map.delete(key);
    else if (this.#map.size >= this.capacity) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    this.#map.set(key, value);
    this.#last = key;
  }

  delete(key: K): boolean {
    const value = this.#map.get(key);
    if (value === undefined) return false;
    this.#map.delete(key);
    if (key === this.#last) this.#last = undefined;
    this.onEvict?.(key, value);
    return true;
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  clear(): void {
    for (const key of [...this.#map.keys()]) this.delete(key);
  }
}

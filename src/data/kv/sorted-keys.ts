/**
 * The memory store's key order, for `scan`: keys kept sorted by UTF-8 bytes in a list of chunks
 * (each at most 2 × CHUNK sorted keys), so an insert or delete moves at most one chunk's worth of
 * pointers and finding where a page starts is two binary searches, even at a million keys.
 */
import { compareKeys } from './caps.js';

const CHUNK = 512;

export class SortedKeys {
  #chunks: string[][] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(key: string): void {
    const chunks = this.#chunks;
    if (chunks.length === 0) {
      chunks.push([key]);
      this.#size = 1;
      return;
    }
    let index = this.#chunkFor(key);
    if (index === chunks.length) index--;
    const chunk = chunks[index]!;
    const at = lowerBound(chunk, key);
    if (chunk[at] === key) return;
    chunk.splice(at, 0, key);
    this.#size++;
    if (chunk.length > 2 * CHUNK) chunks.splice(index + 1, 0, chunk.splice(CHUNK));
  }

  delete(key: string): boolean {
    const chunks = this.#chunks;
    const index = this.#chunkFor(key);
    if (index === chunks.length) return false;
    const chunk = chunks[index]!;
    const at = lowerBound(chunk, key);
    if (chunk[at] !== key) return false;
    chunk.splice(at, 1);
    this.#size--;
    if (chunk.length === 0) chunks.splice(index, 1);
    return true;
  }

  /** Keys from `start` on (after it, when `exclusive`), in order. */
  *from(start: string, exclusive: boolean): Generator<string, void, undefined> {
    const chunks = this.#chunks;
    let index = this.#chunkFor(start);
    if (index === chunks.length) return;
    let at = lowerBound(chunks[index]!, start);
    if (exclusive && chunks[index]![at] === start) at++;
    // Iterates by position, re-reading the chunk each step: callers do not change the keys mid-walk.
    for (; index < chunks.length; index++, at = 0) {
      const chunk = chunks[index]!;
      for (; at < chunk.length; at++) yield chunk[at]!;
    }
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
  }

  /** The first chunk whose last key is >= key (chunks.length when none is). */
  #chunkFor(key: string): number {
    const chunks = this.#chunks;
    let low = 0;
    let high = chunks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const chunk = chunks[mid]!;
      if (compareKeys(chunk[chunk.length - 1]!, key) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** The first position in sorted `chunk` whose key is >= key. */
function lowerBound(chunk: readonly string[], key: string): number {
  let low = 0;
  let high = chunk.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(chunk[mid]!, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

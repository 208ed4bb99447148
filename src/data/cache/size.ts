/**
 * The cache's size estimator: bytes a value roughly holds on the V8 heap, counted by walking it.
 * It is an estimate (V8 may store a string in one byte per character; we count two), meant to make
 * `maxBytes` a real bound, not an exact accounting. Pass `sizeOf` for exact or cheaper sizes.
 *
 * | value                          | bytes                                        |
 * |--------------------------------|----------------------------------------------|
 * | undefined, null, boolean, number | 8                                          |
 * | bigint                         | 16                                           |
 * | string                         | 16 + 2 per UTF-16 unit                       |
 * | Buffer, typed array, ArrayBuffer | 64 + byteLength                            |
 * | Date                           | 32                                           |
 * | array                          | 16 + 8 per slot + its elements               |
 * | Map, Set                       | 32 + 16 per entry + keys and values          |
 * | other objects                  | 32 + per own enumerable property: 8 + 2 per name character + its value |
 *
 * Each object is counted once (shared and cyclic references too). A value made of more than
 * MAX_ESTIMATED_VALUES values (elements, properties, entries) is reported as +Infinity: too large
 * to cache, and the walk stays bounded.
 */

export const MAX_ESTIMATED_VALUES = 1_000_000;

export function estimateSize(value: unknown): number {
  // Primitives without the walk's allocations: most cached values are small.
  switch (typeof value) {
    case 'string':
      return 16 + 2 * value.length;
    case 'bigint':
      return 16;
    case 'object':
      if (value === null) return 8;
      break;
    default:
      return 8;
  }
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  let bytes = 0;
  // Values visited or waiting: checked before each push, so neither the walk nor its stack grows unbounded.
  let values = 1;
  const room = (count: number): boolean => (values += count) <= MAX_ESTIMATED_VALUES;
  while (stack.length > 0) {
    const current = stack.pop();
    switch (typeof current) {
      case 'string':
        bytes += 16 + 2 * current.length;
        continue;
      case 'bigint':
        bytes += 16;
        continue;
      case 'object':
        break;
      default:
        bytes += 8;
        continue;
    }
    if (current === null) {
      bytes += 8;
      continue;
    }
    if (seen.has(current)) {
      bytes += 8;
      continue;
    }
    seen.add(current);
    if (ArrayBuffer.isView(current)) bytes += 64 + current.byteLength;
    else if (current instanceof ArrayBuffer) bytes += 64 + current.byteLength;
    else if (current instanceof Date) bytes += 32;
    else if (Array.isArray(current)) {
      bytes += 16 + 8 * current.length;
      if (!room(current.length)) return Number.POSITIVE_INFINITY;
      for (const element of current) stack.push(element);
    } else if (current instanceof Map) {
      bytes += 32 + 16 * current.size;
      if (!room(2 * current.size)) return Number.POSITIVE_INFINITY;
      for (const [key, entry] of current) stack.push(key, entry);
    } else if (current instanceof Set) {
      bytes += 32 + 16 * current.size;
      if (!room(current.size)) return Number.POSITIVE_INFINITY;
      for (const entry of current) stack.push(entry);
    } else {
      bytes += 32;
      for (const key in current) {
        if (!Object.prototype.hasOwnProperty.call(current, key)) continue;
        bytes += 8 + 2 * key.length;
        if (!room(1)) return Number.POSITIVE_INFINITY;
        stack.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return bytes;
}

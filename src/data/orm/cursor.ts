/**
 * Keyset pagination cursors: the order columns' values of a page's last row, as base64url JSON with
 * the types JSON lacks tagged (bigint, Date, Buffer). A cursor comes back from a client, so decoding
 * checks its size and shape and fails with InvalidQuery rather than trusting it.
 */
import { InvalidQuery } from './errors.js';

/** Longest cursor accepted (characters). */
export const MAX_CURSOR_LENGTH = 4096;

type Tagged = string | number | boolean | { readonly b: string } | { readonly d: string } | { readonly x: string };

function tag(value: unknown): Tagged {
  if (typeof value === 'bigint') return { b: value.toString() };
  if (value instanceof Date) return { d: value.toISOString() };
  if (Buffer.isBuffer(value)) return { x: value.toString('hex') };
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new InvalidQuery(`a ${typeof value} cannot be a pagination key`);
}

function untag(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const v = value as Record<string, unknown>;
    if (keys.length === 1 && typeof v.b === 'string' && /^-?\d{1,20}$/.test(v.b)) return BigInt(v.b);
    if (keys.length === 1 && typeof v.d === 'string') {
      const date = new Date(v.d);
      if (!Number.isNaN(date.getTime())) return date;
    }
    if (keys.length === 1 && typeof v.x === 'string' && /^(?:[0-9a-f]{2})*$/.test(v.x)) return Buffer.from(v.x, 'hex');
  }
  throw new InvalidQuery('bad pagination cursor');
}

export function encodeCursor(values: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(values.map(tag))).toString('base64url');
}

export function decodeCursor(cursor: string, expected: number): unknown[] {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]*$/.test(cursor)) throw new InvalidQuery('bad pagination cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidQuery('bad pagination cursor');
  }
  if (!Array.isArray(parsed) || parsed.length !== expected) throw new InvalidQuery('bad pagination cursor (it does not fit this query\'s order)');
  return parsed.map(untag);
}

/**
 * A statement's result as the caller sees it: a plain object. Its `fields` are shared by every
 * result of the same statement in one batch (and frozen), so a point select or an insert allocates
 * nothing for them.
 */
import type { FieldInfo, Result } from '../values.js';

export const NO_FIELDS: readonly FieldInfo[] = Object.freeze([]);

export function result<R>(rows: R[], affected: number, lastInsertId: bigint | number | null, command: string, fields: readonly FieldInfo[]): Result<R> {
  return { rows, affected, lastInsertId, command, fields };
}

export function fieldsOf(columns: readonly string[] | null | undefined): readonly FieldInfo[] {
  if (columns === null || columns === undefined || columns.length === 0) return NO_FIELDS;
  return Object.freeze(columns.map((name) => Object.freeze({ name, typeOid: 0 })));
}

/** The fields of SQL slot `slot` of a reply frame, made once per frame. */
export function frameFields(frame: { readonly f: readonly (readonly string[] | null)[]; fields?: (readonly FieldInfo[] | undefined)[] }, slot: number): readonly FieldInfo[] {
  const cache = (frame.fields ??= []);
  return (cache[slot] ??= fieldsOf(frame.f[slot]));
}

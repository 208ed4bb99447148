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

/** SQL texts whose fields are kept; the cache is cleared when full. */
const FIELDS_CAP = 4_096;

/**
 * Fields by SQL text, made once and shared by every result of the statement while its column names
 * stay the same (a schema change may change them): an awaited statement is a batch of its own, and
 * made its fields anew for every result otherwise.
 */
export class FieldsCache {
  readonly #bySql = new Map<string, readonly FieldInfo[]>();

  of(sql: string, columns: readonly string[] | null): readonly FieldInfo[] {
    if (columns === null || columns.length === 0) return NO_FIELDS;
    const known = this.#bySql.get(sql);
    if (known !== undefined && sameNames(known, columns)) return known;
    if (this.#bySql.size >= FIELDS_CAP) this.#bySql.clear();
    const fields = fieldsOf(columns);
    this.#bySql.set(sql, fields);
    return fields;
  }
}

function sameNames(fields: readonly FieldInfo[], columns: readonly string[]): boolean {
  if (fields.length !== columns.length) return false;
  for (let i = 0; i < columns.length; i++) if (fields[i]!.name !== columns[i]) return false;
  return true;
}

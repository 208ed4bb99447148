/**
 * The heal matrix as a pure function of the backend and the error: which heal a failed statement
 * calls for, or Fatal. It reads only the error (SQLSTATE or SQLite code, message, and the server's
 * table/column fields); whether the heal applies to a model, and to which column, is decided
 * afterwards against the model and the live schema (resolve.ts).
 *
 * | error | Postgres | SQLite | plan |
 * | --- | --- | --- | --- |
 * | undefined table | 42P01 | "no such table: t" | createTable |
 * | undefined column | 42703 | "no such column: c", "table t has no column named c" | addColumn |
 * | string too long | 22001 on character varying(n) | (not enforced) | widenVarchar |
 * | integer overflow | 22003 on integer / smallint, or the driver's EncodeFailed "as int4: out of range" | (not enforced) | widenInt |
 * | NOT NULL violated | 23502 | SQLITE_CONSTRAINT_NOTNULL | dropNotNull |
 * | anything else | | | fatal |
 */
import type { Backend } from '../../values.js';

export type HealPlan =
  | { readonly kind: 'createTable'; readonly table?: string }
  | { readonly kind: 'addColumn'; readonly table?: string; readonly column?: string }
  | { readonly kind: 'widenVarchar'; readonly length: number }
  | { readonly kind: 'widenInt'; readonly from: 'smallint' | 'integer' }
  | { readonly kind: 'dropNotNull'; readonly table?: string; readonly column?: string };

export type HealPlanKind = HealPlan['kind'];

export interface Fatal {
  readonly kind: 'fatal';
  readonly reason: string;
}

/** The code that triggered a heal, as journaled: the SQLSTATE, or SQLite's extended code. */
export function triggerCode(error: unknown): string | undefined {
  const fields = error as { sqlstate?: unknown; sqliteCode?: unknown } | null;
  if (typeof fields !== 'object' || fields === null) return undefined;
  if (typeof fields.sqlstate === 'string') return fields.sqlstate;
  if (typeof fields.sqliteCode === 'string') return fields.sqliteCode;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function fatal(reason: string): Fatal {
  return { kind: 'fatal', reason };
}

/** The last dotted part of a possibly qualified name (`public.users` → `users`). */
function unqualified(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? name : name.slice(dot + 1);
}

function unquote(name: string): string {
  return name.length >= 2 && name.startsWith('"') && name.endsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name;
}

/** Pure: the heal `error` calls for on `backend`, or why none. */
export function classify(backend: Backend, error: unknown): HealPlan | Fatal {
  if (typeof error !== 'object' || error === null) return fatal('not an error object');
  const { message, sqlstate, sqliteCode, table, column } = error as { message?: unknown; sqlstate?: unknown; sqliteCode?: unknown; table?: unknown; column?: unknown };
  const text = typeof message === 'string' ? message : '';
  const serverTable = typeof table === 'string' ? table : undefined;
  const serverColumn = typeof column === 'string' ? column : undefined;

  if (backend === 'postgres') {
    // A statement prepared while the column was int4 binds int4 parameters: the driver refuses a wider value before the server sees it.
    const code = (error as { code?: unknown }).code;
    if (code === 'DB_ENCODE_FAILED') {
      const range = /as (int2|int4): out of range/.exec(text);
      return range === null ? fatal('a parameter that cannot be encoded is not a schema problem') : { kind: 'widenInt', from: range[1] === 'int2' ? 'smallint' : 'integer' };
    }
    if (typeof sqlstate !== 'string') return fatal('no SQLSTATE: not a server error');
    switch (sqlstate) {
      case '42P01': {
        const match = /relation "(.+)" does not exist/.exec(text);
        return match === null ? { kind: 'createTable' } : { kind: 'createTable', table: unqualified(match[1]!) };
      }
      case '42703': {
        // `column "c" of relation "t" does not exist`, `column "c" does not exist`, `column t.c does not exist`.
        const ofRelation = /column "(.+)" of relation "(.+)" does not exist/.exec(text);
        if (ofRelation !== null) return { kind: 'addColumn', table: unqualified(ofRelation[2]!), column: ofRelation[1]! };
        const quoted = /column "(.+)" does not exist/.exec(text);
        if (quoted !== null) return { kind: 'addColumn', column: quoted[1]! };
        const dotted = /column (\S+)\.(\S+) does not exist/.exec(text);
        if (dotted !== null) return { kind: 'addColumn', column: dotted[2]! };
        // PL/pgSQL's `record "new" has no field` is 42703 too: not a missing column of a table.
        return /^record /.test(text) ? fatal('42703 from a record field, not a table column') : { kind: 'addColumn' };
      }
      case '22001': {
        const match = /value too long for type character varying\((\d+)\)/.exec(text);
        return match === null ? fatal('22001 on a type other than varchar (only varchar is widened)') : { kind: 'widenVarchar', length: Number(match[1]) };
      }
      case '22003': {
        if (/\bsmallint\b/.test(text)) return { kind: 'widenInt', from: 'smallint' };
        if (/\binteger\b/.test(text)) return { kind: 'widenInt', from: 'integer' };
        return fatal('22003 on a type other than integer/smallint (bigint and numeric are not widened)');
      }
      case '23502':
        return { kind: 'dropNotNull', ...(serverTable === undefined ? {} : { table: serverTable }), ...(serverColumn === undefined ? {} : { column: serverColumn }) };
      default:
        return fatal(`SQLSTATE ${sqlstate} is not in the heal matrix`);
    }
  }

  if (typeof sqliteCode !== 'string') return fatal('no SQLite code: not a server error');
  if (sqliteCode === 'SQLITE_CONSTRAINT_NOTNULL') {
    const match = /NOT NULL constraint failed: (.+)\.([^.]+)$/.exec(text);
    return match === null ? { kind: 'dropNotNull' } : { kind: 'dropNotNull', table: unqualified(match[1]!), column: match[2]! };
  }
  if (sqliteCode !== 'SQLITE_ERROR') return fatal(`${sqliteCode} is not in the heal matrix`);
  const noTable = /no such table: (\S+)/.exec(text);
  if (noTable !== null) return { kind: 'createTable', table: unqualified(noTable[1]!) };
  const hasNoColumn = /table (\S+) has no column named (.+)$/.exec(text);
  if (hasNoColumn !== null) return { kind: 'addColumn', table: unquote(unqualified(hasNoColumn[1]!)), column: unquote(hasNoColumn[2]!) };
  // `no such column: note`, `no such column: t.note`, `no such column: "note" - should this be a string literal in single-quotes?`
  const noColumn = /no such column: ("[^"]*"|[^\s".]+)(?:\.("[^"]*"|\S+))?/.exec(text);
  if (noColumn !== null) return { kind: 'addColumn', column: unquote(noColumn[2] ?? noColumn[1]!) };
  return fatal('SQLITE_ERROR that is not a missing table or column');
}

/** Whether classify found a heal. */
export function isHealPlan(result: HealPlan | Fatal): result is HealPlan {
  return result.kind !== 'fatal';
}

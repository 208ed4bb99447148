/**
 * Raw SQL, the only way: a tagged template whose interpolations are bound parameters, never
 * spliced text. Identifiers go through `sql.ident()` (validated and quoted); fragments nest, so a
 * query can be composed from pieces without ever concatenating values into SQL.
 *
 * ```ts
 * await orm.execute(sql`SELECT * FROM ${sql.ident('users')} WHERE email = ${email}`);
 * ```
 */
import { InvalidQuery } from './errors.js';
import type { Value } from '../values.js';
import { quoteIdent } from './dialect.js';

const FRAGMENT = Symbol('molo.orm.sql');
const IDENT = Symbol('molo.orm.ident');

/** A piece of SQL with its bound values; build with the `sql` tag. */
export interface SqlFragment {
  readonly [FRAGMENT]: true;
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
}

/** A validated identifier, quoted where it is interpolated. */
export interface SqlIdent {
  readonly [IDENT]: true;
  readonly quoted: string;
}

/** SQL text with `$n` placeholders and the values they bind. */
export interface CompiledSql {
  readonly text: string;
  readonly params: Value[];
}

function tag(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  // A template's strings array is frozen and has `raw`; an array from JSON (or built at run time) is
  // neither, and calling the tag as a function with one would put its text in the statement.
  if (!Array.isArray(strings) || !Object.isFrozen(strings) || !Array.isArray((strings as TemplateStringsArray).raw) || strings.length !== values.length + 1) {
    throw new InvalidQuery('sql must be used as a template tag: sql`... ${value} ...`');
  }
  return { [FRAGMENT]: true, strings: [...strings], values };
}

export function isSqlFragment(value: unknown): value is SqlFragment {
  return typeof value === 'object' && value !== null && (value as Partial<SqlFragment>)[FRAGMENT] === true;
}

function isIdent(value: unknown): value is SqlIdent {
  return typeof value === 'object' && value !== null && (value as Partial<SqlIdent>)[IDENT] === true;
}

/** The tag, with its helpers. */
export const sql = Object.assign(tag, {
  /** An identifier (table, column): validated (non-empty, no NUL, ≤ 63 bytes) and double-quoted. `ident('t', 'c')` is `"t"."c"`. */
  ident(...parts: string[]): SqlIdent {
    if (parts.length === 0) throw new InvalidQuery('sql.ident() needs a name');
    return { [IDENT]: true, quoted: parts.map((part) => quoteIdent(part)).join('.') };
  },
  /** Fragments joined with a separator (constant text), e.g. a column list or `AND`-ed conditions. */
  join(fragments: readonly SqlFragment[], separator = ', '): SqlFragment {
    const strings: string[] = [''];
    const values: unknown[] = [];
    fragments.forEach((fragment, i) => {
      if (i > 0) strings[strings.length - 1] += separator;
      values.push(fragment);
      strings.push('');
    });
    return { [FRAGMENT]: true, strings, values };
  },
  /** The empty fragment. */
  empty: { [FRAGMENT]: true, strings: [''], values: [] } as SqlFragment,
});

/**
 * Appends the fragment's text to the result, numbering its values after those already in `params`
 * (so a fragment can sit inside a builder's statement).
 */
export function compileSql(fragment: SqlFragment, params: Value[] = []): CompiledSql {
  if (!isSqlFragment(fragment)) throw new InvalidQuery('not a fragment from the sql tag');
  let text = '';
  const walk = (piece: SqlFragment): void => {
    const { strings, values } = piece;
    for (let i = 0; i < strings.length; i++) {
      text += strings[i];
      if (i >= values.length) continue;
      const value = values[i];
      if (isSqlFragment(value)) walk(value);
      else if (isIdent(value)) text += value.quoted;
      else {
        params.push((value === undefined ? null : value) as Value);
        text += `$${params.length}`;
      }
    }
  };
  walk(fragment);
  return { text, params };
}

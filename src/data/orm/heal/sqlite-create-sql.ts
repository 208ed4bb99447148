/**
 * Edits a SQLite CREATE TABLE statement as stored in sqlite_master, for the table rebuild: the new
 * table is the old one with exactly the requested change (a column's NOT NULL dropped, a default
 * set, columns appended) and everything else (CHECKs, foreign keys, collations, AUTOINCREMENT,
 * WITHOUT ROWID) kept as written. Quoted text and parenthesized expressions are masked before any
 * keyword is searched, so `DEFAULT 'NOT NULL'` or `CHECK (x IS NOT NULL)` are never touched.
 */

/** `text` with string literals, quoted identifiers and parenthesized parts replaced by spaces (same length). */
export function mask(text: string): string {
  let out = '';
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === close) {
          if (close !== ']' && text[j + 1] === close) j += 2;
          else break;
        } else j++;
      }
      out += ' '.repeat(Math.min(j + 1, text.length) - i);
      i = j + 1;
      continue;
    }
    if (c === '(') depth++;
    if (depth > 0) {
      if (c === ')') depth--;
      out += ' ';
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** The top-level comma-separated items of a parenthesized list's inside. */
function splitItems(inner: string): string[] {
  const masked = mask(inner);
  const items: string[] = [];
  let start = 0;
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] === ',') {
      items.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  items.push(inner.slice(start));
  return items;
}

const TABLE_CONSTRAINT = /^\s*(CONSTRAINT|PRIMARY|UNIQUE|CHECK|FOREIGN)\b/i;

export interface ParsedCreateTable {
  /** `CREATE TABLE "name"` up to the opening parenthesis. */
  readonly head: string;
  /** Column definitions, each as written. */
  readonly columns: string[];
  /** Table constraints, each as written. */
  readonly constraints: string[];
  /** What follows the closing parenthesis (`WITHOUT ROWID`, `STRICT`). */
  readonly tail: string;
}

export function parseCreateTable(sql: string): ParsedCreateTable {
  let openAt = -1;
  let closeAt = -1;
  let depth = 0;
  forEachUnquoted(sql, (c, i) => {
    if (c === '(') {
      if (depth++ === 0 && openAt === -1) openAt = i;
    } else if (c === ')' && --depth === 0) {
      closeAt = i;
      return true;
    }
    return false;
  });
  if (openAt === -1 || closeAt === -1) throw new Error(`cannot parse CREATE TABLE: ${sql.slice(0, 200)}`);
  const items = splitItems(sql.slice(openAt + 1, closeAt));
  const columns: string[] = [];
  const constraints: string[] = [];
  for (const item of items) (TABLE_CONSTRAINT.test(item) ? constraints : columns).push(item.trim());
  return { head: sql.slice(0, openAt).trim(), columns, constraints, tail: sql.slice(closeAt + 1).trim() };
}

/** Calls `visit` with each character outside quoted strings and identifiers, until it returns true. */
function forEachUnquoted(sql: string, visit: (c: string, i: number) => boolean): void {
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote !== undefined) {
      if (c === quote) {
        if (quote !== ']' && sql[i + 1] === quote) i++;
        else quote = undefined;
      }
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '[') quote = ']';
    else if (visit(c, i)) return;
  }
}

/** The name a column definition declares, unquoted. */
export function columnNameOf(definition: string): string {
  const text = definition.trim();
  const first = text[0];
  if (first === '"' || first === '`' || first === '[' || first === "'") {
    const close = first === '[' ? ']' : first;
    let name = '';
    for (let i = 1; i < text.length; i++) {
      if (text[i] === close) {
        if (close !== ']' && text[i + 1] === close) {
          name += close;
          i++;
        } else return name;
      } else name += text[i];
    }
    return name;
  }
  return /^\S+/.exec(text)![0];
}

/** A column definition without its NOT NULL constraint (named or not, with or without ON CONFLICT). */
export function dropNotNull(definition: string): string {
  const pattern = /(\s+CONSTRAINT\s+\S+)?\s+NOT\s+NULL(\s+ON\s+CONFLICT\s+[A-Za-z]+)?/gi;
  const masked = mask(definition);
  let out = '';
  let last = 0;
  for (const match of masked.matchAll(pattern)) {
    out += definition.slice(last, match.index);
    last = match.index + match[0].length;
  }
  return out + definition.slice(last);
}

/** Whether a column definition already has a DEFAULT clause. */
export function hasDefault(definition: string): boolean {
  return /\bDEFAULT\b/i.test(mask(definition));
}

export interface CreateTableEdit {
  /** Columns whose NOT NULL goes, each with the DEFAULT to give it when it has none (the model's). */
  readonly dropNotNull?: readonly { readonly column: string; readonly defaultSql?: string }[];
  /** Column definitions to append after the last column. */
  readonly addColumns?: readonly string[];
}

/** The CREATE TABLE of `sql` for a table called `newName` (already quoted), with `edit` applied. */
export function rewriteCreateTable(sql: string, newName: string, edit: CreateTableEdit): string {
  const parsed = parseCreateTable(sql);
  const columns = parsed.columns.map((definition) => {
    const change = edit.dropNotNull?.find((entry) => entry.column === columnNameOf(definition));
    if (change === undefined) return definition;
    let next = dropNotNull(definition);
    if (change.defaultSql !== undefined && !hasDefault(next)) next += ` DEFAULT ${change.defaultSql}`;
    return next;
  });
  for (const wanted of edit.dropNotNull ?? []) {
    if (!parsed.columns.some((definition) => columnNameOf(definition) === wanted.column)) throw new Error(`no column ${wanted.column} in ${parsed.head}`);
  }
  columns.push(...(edit.addColumns ?? []));
  const tail = parsed.tail === '' ? '' : ` ${parsed.tail}`;
  return `CREATE TABLE ${newName} (${[...columns, ...parsed.constraints].join(', ')})${tail}`;
}

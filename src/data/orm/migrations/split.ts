/**
 * Splits a migration file into statements. SQLite prepares one statement at a time, so a file of
 * several must be cut at its semicolons, but not at the ones inside quotes, comments, Postgres
 * dollar quotes, or a trigger's BEGIN ... END body (where CASE ... END nests too).
 */
import type { Backend } from '../../values.js';

/** The statements of `sql`, each trimmed, without its final semicolon; comment-only pieces are dropped. */
export function splitStatements(sql: string, backend: Backend): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  let meaningful = false;
  /** Words since the statement began, to spot CREATE [TEMP] TRIGGER. */
  let words: string[] = [];
  let blockDepth = 0;
  const n = sql.length;

  const finish = (end: number): void => {
    const text = sql.slice(start, end).trim();
    if (meaningful && text.length > 0) statements.push(text);
    start = end + 1;
    meaningful = false;
    words = [];
    blockDepth = 0;
  };

  while (i < n) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const eol = sql.indexOf('\n', i);
      i = eol === -1 ? n : eol + 1;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close === -1 ? n : close + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(sql, i, c);
      meaningful = true;
      continue;
    }
    if (c === '[' && backend === 'sqlite') {
      const close = sql.indexOf(']', i + 1);
      i = close === -1 ? n : close + 1;
      meaningful = true;
      continue;
    }
    if (c === '$' && backend === 'postgres') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66));
      if (tag !== null && !isWordChar(sql[i - 1])) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        i = close === -1 ? n : close + tag[0].length;
        meaningful = true;
        continue;
      }
    }
    if (isWordStart(c) && !isWordChar(sql[i - 1])) {
      let j = i + 1;
      while (j < n && isWordChar(sql[j])) j++;
      const word = sql.slice(i, j).toUpperCase();
      meaningful = true;
      if (words.length < 4) words.push(word);
      if (isTrigger(words)) {
        if (word === 'BEGIN' || word === 'CASE') blockDepth++;
        else if (word === 'END' && blockDepth > 0) blockDepth--;
      }
      i = j;
      continue;
    }
    if (c === ';' && blockDepth === 0) {
      finish(i);
      i++;
      continue;
    }
    if (!/\s/.test(c)) meaningful = true;
    i++;
  }
  finish(n);
  return statements;
}

function isTrigger(words: readonly string[]): boolean {
  if (words[0] !== 'CREATE') return false;
  return words[1] === 'TRIGGER' || ((words[1] === 'TEMP' || words[1] === 'TEMPORARY') && words[2] === 'TRIGGER');
}

/** Index just past the closing quote; a doubled quote is an escaped one. */
function skipQuoted(sql: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

function isWordStart(c: string): boolean {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c === '_';
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && (isWordStart(c) || (c >= '0' && c <= '9') || c === '$');
}

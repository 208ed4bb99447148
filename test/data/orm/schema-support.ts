/**
 * Helpers for the schema, sync, heal and migration tests: a Database that records every statement
 * it runs (including inside transactions and sessions), and temp directories that are removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database, Queryable } from '../../../src/data/index.js';

export interface Recording {
  readonly db: Database;
  /** Every SQL text run, in order. */
  readonly statements: string[];
  /** The statements that change the schema (CREATE, ALTER, DROP). */
  ddl(): string[];
  clear(): void;
}

const DDL = /^\s*(CREATE|ALTER|DROP)\b/i;

/** `db`, recording each statement it and its transactions and sessions run. */
export function recording(db: Database): Recording {
  const statements: string[] = [];
  const wrap = <Q extends Queryable>(q: Q): Q =>
    new Proxy(q, {
      get(target, prop) {
        if (prop === 'query') return (sql: string, ...rest: unknown[]) => (statements.push(sql), (target.query as (...a: unknown[]) => unknown)(sql, ...rest));
        if (prop === 'transaction') {
          return (fn: (tx: Queryable) => Promise<unknown>, ...rest: unknown[]) =>
            (target as unknown as { transaction: (...a: unknown[]) => unknown }).transaction((tx: Queryable) => fn(wrap(tx)), ...rest);
        }
        if (prop === 'session') {
          return (fn: (s: Queryable) => Promise<unknown>, ...rest: unknown[]) =>
            (target as unknown as { session: (...a: unknown[]) => unknown }).session((s: Queryable) => fn(wrap(s)), ...rest);
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return {
    db: wrap(db),
    statements,
    ddl: () => statements.filter((sql) => DDL.test(sql)),
    clear: () => void statements.splice(0),
  };
}

/** A fresh temp directory and its removal. */
export function tempDir(prefix = 'molo-schema-'): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A logger that keeps what it is given, for asserting on warnings. */
export function memoryLogger(): { logger: import('../../../src/telemetry/index.js').Logger; lines: { level: string; fields: Record<string, unknown>; msg?: string }[] } {
  const lines: { level: string; fields: Record<string, unknown>; msg?: string }[] = [];
  const make = (level: string) => (fields: object | string, msg?: string) => {
    if (typeof fields === 'string') lines.push({ level, fields: {}, msg: fields });
    else lines.push({ level, fields: fields as Record<string, unknown>, ...(msg === undefined ? {} : { msg }) });
  };
  const logger = {
    trace: make('trace'),
    debug: make('debug'),
    info: make('info'),
    warn: make('warn'),
    error: make('error'),
    fatal: make('fatal'),
    child: () => logger,
    isLevelEnabled: () => true,
  };
  return { logger, lines };
}

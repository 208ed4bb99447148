/**
 * A statement's parameters as better-sqlite3 binds them: a slice of the batch's flat parameter
 * array, spread into the call without copying when there are few of them (the common case), or
 * as { 1: v1, ... } for `$1`/`?1`/`:1` parameters, which better-sqlite3 binds by name.
 */
import type Database from 'better-sqlite3';
import type { SqliteParam } from './protocol.js';
import { bindable } from './rows.js';

/** An integral number binds as INTEGER (better-sqlite3 binds every number as REAL). */
function int(value: SqliteParam | undefined): SqliteParam | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value;
}

/** One statement's parameters: `count` of them from `params[first]` on. */
export class Args {
  constructor(
    readonly params: readonly SqliteParam[],
    readonly first: number,
    readonly count: number,
  ) {}

  #array(): SqliteParam[] {
    return bindable(this.params.slice(this.first, this.first + this.count));
  }

  #named(): Record<string, SqliteParam> {
    const values = this.#array();
    const named: Record<string, SqliteParam> = {};
    for (let i = 0; i < values.length; i++) named[i + 1] = values[i]!;
    return named;
  }

  run(stmt: Database.Statement, numbered: boolean): Database.RunResult {
    const { params: p, first: f } = this;
    if (numbered) return stmt.run(this.#named());
    switch (this.count) {
      case 0:
        return stmt.run();
      case 1:
        return stmt.run(int(p[f]));
      case 2:
        return stmt.run(int(p[f]), int(p[f + 1]));
      case 3:
        return stmt.run(int(p[f]), int(p[f + 1]), int(p[f + 2]));
      case 4:
        return stmt.run(int(p[f]), int(p[f + 1]), int(p[f + 2]), int(p[f + 3]));
      default:
        return stmt.run(this.#array());
    }
  }

  /** The values as `stmt.all(...)`'s arguments. */
  bound(numbered: boolean): SqliteParam[] | [Record<string, SqliteParam>] {
    return numbered ? [this.#named()] : this.#array();
  }

  get(stmt: Database.Statement, numbered: boolean): unknown {
    const { params: p, first: f } = this;
    if (numbered) return stmt.get(this.#named());
    switch (this.count) {
      case 0:
        return stmt.get();
      case 1:
        return stmt.get(int(p[f]));
      case 2:
        return stmt.get(int(p[f]), int(p[f + 1]));
      default:
        return stmt.get(this.#array());
    }
  }

  iterate(stmt: Database.Statement, numbered: boolean): IterableIterator<unknown> {
    const { params: p, first: f } = this;
    if (numbered) return stmt.iterate(this.#named());
    switch (this.count) {
      case 0:
        return stmt.iterate();
      case 1:
        return stmt.iterate(int(p[f]));
      case 2:
        return stmt.iterate(int(p[f]), int(p[f + 1]));
      default:
        return stmt.iterate(this.#array());
    }
  }
}

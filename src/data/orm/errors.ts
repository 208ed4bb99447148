/**
 * ORM errors: `DbError`s whose codes are registered in `DataErrorCode` (src/data/errors.ts) and
 * documented in docs/errors.md.
 */
import { DataErrorCode, DbError, type DbErrorOptions } from '../errors.js';

/** A model declaration is wrong (no primary key, an unknown column in an index, a bad length); `.table` names the model. */
export class InvalidModel extends DbError {
  static override readonly code = DataErrorCode.OrmInvalidModel;
  constructor(
    override readonly table: string,
    message: string,
  ) {
    super(`model ${JSON.stringify(table)}: ${message}`, {}, DataErrorCode.OrmInvalidModel, false);
  }
}

/** An identifier (table, column, index, `sql.ident()`) that is empty, holds NUL or is longer than 63 bytes. */
export class InvalidIdentifier extends DbError {
  static override readonly code = DataErrorCode.OrmInvalidIdentifier;
  constructor(
    readonly identifier: string,
    readonly reason: string,
  ) {
    super(`invalid identifier ${JSON.stringify(identifier.length > 80 ? `${identifier.slice(0, 80)}…` : identifier)}: ${reason}`, {}, DataErrorCode.OrmInvalidIdentifier, false);
  }
}

/** A query the builder refuses: an unknown column or relation, an empty update, a bad limit or cursor. */
export class InvalidQuery extends DbError {
  static override readonly code = DataErrorCode.OrmInvalidQuery;
  constructor(message: string) {
    super(message, {}, DataErrorCode.OrmInvalidQuery, false);
  }
}

/**
 * An optimistic-lock conflict: the row's version is no longer the one the update was based on (or
 * the row is gone: `currentVersion` null). Re-read the row and decide again.
 */
export class ConflictError extends DbError {
  static override readonly code = DataErrorCode.OrmConflict;
  constructor(
    override readonly table: string,
    readonly primaryKey: unknown,
    readonly expectedVersion: bigint | number,
    readonly currentVersion: bigint | number | null,
  ) {
    super(
      `stale write to ${table}: expected version ${String(expectedVersion)}, the row ${currentVersion === null ? 'no longer exists' : `is at version ${String(currentVersion)}`}; re-read it`,
      { table },
      DataErrorCode.OrmConflict,
      false,
    );
  }
}

/** `all()` matched more than its cap (default 10,000 rows); read with `paginate()` or `stream()`. */
export class OrmTooManyRows extends DbError {
  static override readonly code = DataErrorCode.OrmTooManyRows;
  constructor(
    override readonly table: string,
    readonly maxRows: number,
  ) {
    super(`query on ${table} matched more than ${maxRows} rows (all() cap); use paginate({ after, limit }) or stream()`, { table }, DataErrorCode.OrmTooManyRows, false);
  }
}

/** `findOrThrow` (or a write by primary key) found no row. */
export class NotFound extends DbError {
  static override readonly code = DataErrorCode.OrmNotFound;
  constructor(
    override readonly table: string,
    readonly primaryKey: unknown,
  ) {
    super(`no row in ${table} with primary key ${keyText(primaryKey)}`, { table }, DataErrorCode.OrmNotFound, false);
  }
}

function keyText(key: unknown): string {
  try {
    return JSON.stringify(key, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(key);
  } catch {
    return String(key);
  }
}

/** The Syncer could not bring a table in line with its model at boot or on demand (`.table`; the server's error is `cause`). */
export class SchemaSyncFailed extends DbError {
  static override readonly code = DataErrorCode.OrmSchemaSyncFailed;
  constructor(
    override readonly table: string,
    message: string,
    options: DbErrorOptions = {},
  ) {
    super(`schema sync of ${table} failed: ${message}`, options, DataErrorCode.OrmSchemaSyncFailed, false);
  }
}

/**
 * An automatic schema change that is not a widening (a shorter varchar, a smaller integer, another
 * type altogether) was asked for and refused: narrowing, renames and drops need a migration written by a person.
 */
export class NarrowingRefused extends DbError {
  static override readonly code = DataErrorCode.OrmNarrowingRefused;
  constructor(
    override readonly table: string,
    override readonly column: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`refusing to change ${table}.${column} from ${from} to ${to}: only widening is automatic; write a migration`, {}, DataErrorCode.OrmNarrowingRefused, false);
  }
}

/** A heal's own DDL (or its journal write) failed; `cause` is that failure, `original` the statement error that triggered the heal. */
export class HealFailed extends DbError {
  static override readonly code = DataErrorCode.OrmHealFailed;
  constructor(
    message: string,
    readonly original: unknown,
    options: DbErrorOptions = {},
  ) {
    super(`heal failed: ${message}`, options, DataErrorCode.OrmHealFailed, false);
  }
}

/** A migrations directory holds something the migrator cannot use (a badly named file, a dialect variant without its counterpart); `.path` names it. */
export class MigrationInvalid extends DbError {
  static override readonly code = DataErrorCode.OrmMigrationInvalid;
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`invalid migration ${path}: ${message}`, {}, DataErrorCode.OrmMigrationInvalid, false);
  }
}

/** An applied migration's file no longer matches the checksum recorded when it ran: migrations are append-only. Nothing was applied. */
export class MigrationChecksumMismatch extends DbError {
  static override readonly code = DataErrorCode.OrmMigrationChecksumMismatch;
  constructor(readonly mismatches: readonly { readonly id: string; readonly file: string; readonly recorded: string; readonly actual: string }[]) {
    super(
      `${mismatches.length} applied migration(s) changed since they ran (migrations are append-only; add a new one instead): ${mismatches
        .map((m) => `${m.id} (${m.file}: recorded sha256 ${m.recorded.slice(0, 12)}…, now ${m.actual.slice(0, 12)}…)`)
        .join(', ')}`,
      {},
      DataErrorCode.OrmMigrationChecksumMismatch,
      false,
    );
  }
}

/** A migration's SQL failed; its transaction was rolled back and later migrations were not applied. `cause` is the server's error. */
export class MigrationFailed extends DbError {
  static override readonly code = DataErrorCode.OrmMigrationFailed;
  constructor(
    readonly id: string,
    message: string,
    options: DbErrorOptions = {},
  ) {
    super(`migration ${id} failed: ${message}`, options, DataErrorCode.OrmMigrationFailed, false);
  }
}

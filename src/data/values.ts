/**
 * The values, rows and results every data backend speaks. One shape for Postgres and SQLite, so
 * application code never branches on the driver.
 */

/** A JSON document, as `json`/`jsonb` columns hold it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A value bound as a parameter or read from a column. int8 reads as `bigint`, numeric as `string`,
 * bytea/BLOB as `Buffer`, timestamps as `Date`; arrays nest; plain objects travel as JSON.
 */
export type Value = null | boolean | number | bigint | string | Buffer | Date | readonly Value[] | { readonly [key: string]: unknown };

/** One result row, keyed by column name. */
export type Row = Record<string, unknown>;

/** A column of a result: its name and, for Postgres, its type OID. */
export interface FieldInfo {
  readonly name: string;
  /** Postgres type OID; 0 on SQLite, whose columns have no fixed type. */
  readonly typeOid: number;
}

export interface Result<R = Row> {
  readonly rows: R[];
  /** Rows inserted, updated or deleted (0 for statements that report none). */
  readonly affected: number;
  /** SQLite's last insert rowid; Postgres has none (use RETURNING) and reports null. */
  readonly lastInsertId: bigint | number | null;
  /** The command tag's verb: SELECT, INSERT, UPDATE, ... */
  readonly command: string;
  readonly fields: readonly FieldInfo[];
}

export type Backend = 'postgres' | 'sqlite';

/**
 * The ORM's entry object: one per `Database`. It owns the write-event channel of that database
 * handle, the optional Healer, and hands out queries and writes over models; `transaction` gives an
 * `Orm` bound to the transaction (events published after COMMIT).
 *
 * ```ts
 * const orm = new Orm(db);
 * const user = await orm.insert(User, { email: 'a@example.com' });
 * const page = await orm.query(Post).where(eq(Post.c.authorId, user.id)).orderBy('id').paginate({ limit: 50 });
 * ```
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../../telemetry/index.js';
import type { DataContext } from '../context.js';
import { DEFAULT_MAX_ROWS, type Database, type Queryable, type TransactionOptions } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import { NotFound } from './errors.js';
import type { Backend, Result, Row } from '../values.js';
import { dialectFor, type Dialect } from './dialect.js';
import { WriteEventChannel } from './events.js';
import { ormMetrics } from './metrics.js';
import { exec, inTransaction, type OrmShared, type Scope } from './execute.js';
import type { AnyModel, InsertOf, ModelMeta, OrmHealer, RowOf } from './model.js';
import { Query } from './query.js';
import type { Oplog } from '../replication/oplog.js';
import { loadOne, preload, type Relation } from './relations.js';
import { compileSql, type SqlFragment } from './sql.js';
import { insertMany, insertOne, upsertRow, type InsertManyOptions, type UpsertOptions } from './write.js';
import { deleteRow, findByKey, updateRow } from './write-key.js';

export interface OrmOptions {
  /** Offered every failed statement; see `OrmHealer`. */
  readonly healer?: OrmHealer;
  /** The channel write events go to (default: a new one, `orm.events`). */
  readonly events?: WriteEventChannel;
  /** Cap of rows `all()` returns (default and ceiling 10,000). */
  readonly maxRows?: number;
  /** Prometheus registry for the ORM's counters (conflicts, heal retries, subscriber errors); none: no metrics. */
  readonly metrics?: Registry;
  /** Where heal retries that failed and throwing event subscribers are logged (pino-shaped). */
  readonly logger?: Logger;
  /** This instance's oplog: writes of models declaring `replicated` append to it in their transaction. */
  readonly oplog?: Oplog;
}

/** A primary key: the value, or an array / object of the values for a composite key. */
export type PrimaryKey = unknown;

/** The model `raw` statements are attributed to (for the healer's context). */
const RAW_META: ModelMeta = { table: '', columns: [], primaryKey: [], indexes: [], uniques: [], checks: [] };

export class Orm {
  private readonly scope: Scope;

  constructor(db: Database, options?: OrmOptions);
  /** @internal a scope of an existing Orm (transaction, context). */
  constructor(scope: Scope);
  constructor(dbOrScope: Database | Scope, options: OrmOptions = {}) {
    if (isScope(dbOrScope)) {
      this.scope = dbOrScope;
      return;
    }
    const maxRows = options.maxRows ?? DEFAULT_MAX_ROWS;
    if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > DEFAULT_MAX_ROWS) {
      throw new InvalidDataConfig('orm.maxRows', `must be an integer from 1 to ${DEFAULT_MAX_ROWS}, got ${String(maxRows)}`);
    }
    const metrics = ormMetrics(options.metrics);
    const logger = options.logger;
    const onListenerError =
      metrics === undefined && logger === undefined
        ? undefined
        : (error: unknown): void => {
            metrics?.listenerErrors.inc();
            logger?.error({ err: error }, 'orm: a write-event subscriber threw');
          };
    const shared: OrmShared = {
      db: dbOrScope,
      backend: dbOrScope.backend,
      dialect: dialectFor(dbOrScope.backend),
      events: options.events ?? new WriteEventChannel(onListenerError === undefined ? {} : { onListenerError }),
      ...(metrics === undefined ? {} : { metrics }),
      ...(logger === undefined ? {} : { logger }),
      ...(options.healer === undefined ? {} : { healer: options.healer }),
      ...(options.oplog === undefined ? {} : { oplog: options.oplog }),
      maxRows,
      facade: (scope) => new Orm(scope),
    };
    this.scope = { shared, q: dbOrScope };
  }

  get backend(): Backend {
    return this.scope.shared.backend;
  }

  get dialect(): Dialect {
    return this.scope.shared.dialect;
  }

  /** Write events of this database handle, published after commit. */
  get events(): WriteEventChannel {
    return this.scope.shared.events;
  }

  /** The database or, inside `transaction`, the transaction statements run on. */
  get db(): Queryable {
    return this.scope.q;
  }

  get inTransaction(): boolean {
    return this.scope.tx !== undefined;
  }

  /** This Orm with every statement under `ctx` (deadline, correlation id, signal). */
  withContext(ctx: DataContext): Orm {
    return new Orm({ ...this.scope, ctx });
  }

  query<M extends AnyModel>(model: M): Query<M> {
    return new Query(this.scope, model);
  }

  /** The row with this primary key, or undefined. */
  find<M extends AnyModel>(model: M, key: PrimaryKey): Promise<RowOf<M> | undefined> {
    return findByKey(this.scope, model, key) as Promise<RowOf<M> | undefined>;
  }

  /** The row with this primary key, or NotFound. */
  async findOrThrow<M extends AnyModel>(model: M, key: PrimaryKey): Promise<RowOf<M>> {
    const row = await findByKey(this.scope, model, key);
    if (row === undefined) throw new NotFound(model.table, key);
    return row as RowOf<M>;
  }

  /** Inserts one row and returns it as stored (defaults, ids and version filled in). */
  insert<M extends AnyModel>(model: M, values: InsertOf<M>): Promise<RowOf<M>> {
    return insertOne(this.scope, model, values as Record<string, unknown>) as Promise<RowOf<M>>;
  }

  /** Inserts rows in chunks under the 1,024-parameter cap (one transaction when it takes several statements). */
  insertMany<M extends AnyModel>(model: M, rows: readonly InsertOf<M>[]): Promise<RowOf<M>[]>;
  insertMany<M extends AnyModel>(model: M, rows: readonly InsertOf<M>[], options: InsertManyOptions & { readonly returning: false }): Promise<number>;
  async insertMany<M extends AnyModel>(model: M, rows: readonly InsertOf<M>[], options: InsertManyOptions = {}): Promise<RowOf<M>[] | number> {
    return (await insertMany(this.scope, model, rows as readonly Record<string, unknown>[], options)) as RowOf<M>[] | number;
  }

  /**
   * Updates the row (found by its primary key) with `patch`, or with the row's own values when no
   * patch is given. Versioned models: matches on the row's version and increments it; a stale row
   * fails with ConflictError carrying the current version.
   */
  async update<M extends AnyModel>(model: M, row: Partial<RowOf<M>>, patch?: Partial<RowOf<M>>): Promise<RowOf<M>> {
    return (await updateRow(this.scope, model, row as Record<string, unknown>, patch as Record<string, unknown> | undefined)) as RowOf<M>;
  }

  /** Deletes the row by its primary key (and version, when the row carries one); whether it was there. */
  async delete<M extends AnyModel>(model: M, row: Partial<RowOf<M>>): Promise<boolean> {
    return deleteRow(this.scope, model, row as Record<string, unknown>);
  }

  /** Inserts, or updates on a conflict of `target` (default: the primary key); returns the row as stored. */
  async upsert<M extends AnyModel>(model: M, values: InsertOf<M>, options: UpsertOptions = {}): Promise<RowOf<M>> {
    return (await upsertRow(this.scope, model, values as Record<string, unknown>, options)) as RowOf<M>;
  }

  /** Lazy loading: the relation's value for `row` (target row or null, or a list). */
  async load<S extends AnyModel, T extends AnyModel, K extends Relation['kind']>(rel: Relation<S, T, K>, row: RowOf<S>): Promise<K extends 'belongsTo' ? RowOf<T> | null : RowOf<T>[]> {
    return (await loadOne(this.scope, rel as unknown as Relation, row as Row)) as K extends 'belongsTo' ? RowOf<T> | null : RowOf<T>[];
  }

  /** Loads relations onto rows already read (in place), one query per relation level. */
  async preload<M extends AnyModel>(model: M, rows: RowOf<M>[], ...paths: string[]): Promise<void> {
    await preload(this.scope, model, rows as Row[], paths);
  }

  /**
   * Runs `fn` in a transaction with an `Orm` bound to it: committed when it resolves, rolled back
   * when it rejects; write events are published after COMMIT. Nested calls use savepoints.
   */
  async transaction<T>(fn: (orm: Orm) => Promise<T>, options: Omit<TransactionOptions, 'ctx'> = {}): Promise<T> {
    return inTransaction(this.scope, (inner) => fn(new Orm(inner)), options);
  }

  /** Raw SQL through the `sql` tag: values bound, identifiers via `sql.ident()`. Rows are not decoded. */
  async execute<R extends Row = Row>(fragment: SqlFragment): Promise<Result<R>> {
    const { text, params } = compileSql(fragment);
    return exec<R>(this.scope, RAW_META, text, params);
  }

  /**
   * Creates the models' tables and indexes if missing (`IF NOT EXISTS`), for tests and examples.
   * Applications use the Syncer, which also adds missing columns and indexes to existing tables.
   */
  async createTables(...models: AnyModel[]): Promise<void> {
    for (const model of models) {
      for (const statement of this.dialect.createTableStatements(model.meta, { ifNotExists: true })) {
        await exec(this.scope, model.meta, statement, []);
      }
    }
  }
}

function isScope(value: Database | Scope): value is Scope {
  return (value as Scope).shared !== undefined && (value as Scope).q !== undefined;
}

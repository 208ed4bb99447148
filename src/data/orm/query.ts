/**
 * The query builder over a model: filters, order, limit/offset, column selections, joins,
 * aggregates with groupBy, count/exists, keyset pagination, streaming, preloads, and bulk
 * update/delete. Values are always bound parameters; identifiers come from the model (validated
 * when it was defined) and are quoted.
 *
 * A Query is a mutable builder (each method returns it): build it, run it once or many times.
 */
import { InvalidQuery, OrmTooManyRows } from './errors.js';
import type { Row, Value } from '../values.js';
import { aggregateDecoder, aggregateSql, isAggregate, type Aggregate } from './aggregates.js';
import { codecFor, decodeRows, decodeShape, shapeDecoders, type Decoder, type ModelCodec } from './codec.js';
import { shapeRowDecoder } from './compiled.js';
import { cachedPlan, decodePlanRows, keepPlan, planKey, type Plan } from './plan.js';
import { quoteIdent } from './dialect.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { exec, type Scope } from './execute.js';
import { and, columnSql, compileCondition, eq, gt, isCondition, lt, matchConditions, or, type CompileContext, type Condition } from './filters.js';
import { isColumnRef, isModel, type AnyModel, type ColumnOf, type ColumnRef, type RowOf } from './model.js';
import { preload } from './relations.js';
import { deleteWhere, updateWhere } from './write-bulk.js';

export type Direction = 'asc' | 'desc';
export type Selection = Record<string, ColumnRef<any> | Aggregate<any>>;
export type SelectedRow<S extends Selection> = { -readonly [K in keyof S]: S[K] extends ColumnRef<infer T> ? T : S[K] extends Aggregate<infer T> ? T : never };

export interface Page<R> {
  readonly rows: R[];
  /** The cursor of the next page (`paginate({ after: next })`), or null on the last page. */
  readonly next: string | null;
}

/** Rows one page may hold. */
export const MAX_PAGE_SIZE = 10_000;

interface Order {
  readonly col: ColumnRef;
  readonly dir: Direction;
}

interface Join {
  readonly kind: 'INNER' | 'LEFT';
  readonly model: AnyModel;
  readonly on: Condition;
}

/** A statement as built: SQL text, parameters and how to read its rows. */
export interface BuiltQuery {
  readonly text: string;
  readonly params: Value[];
}

export class Query<M extends AnyModel, R = RowOf<M>> {
  private readonly codec: ModelCodec;
  private readonly conds: Condition[] = [];
  private readonly orders: Order[] = [];
  private readonly joins: Join[] = [];
  private readonly groups: ColumnRef[] = [];
  private readonly paths: string[] = [];
  private limitN: number | undefined;
  private offsetN: number | undefined;
  /** undefined: every column of the model; string[]: some of them; entries: alias → column or aggregate. */
  private selection: string[] | [string, ColumnRef | Aggregate<unknown>][] | undefined;
  private shape: { names: string[]; decoders: Decoder[] } | undefined;

  constructor(
    private readonly scope: Scope,
    readonly model: M,
  ) {
    this.codec = codecFor(model, scope.shared.backend);
  }

  /**
   * AND-ed with earlier conditions: a condition (`eq(User.c.email, x)`) or `{ column: value }`
   * equalities. Only conditions made by this module's constructors count as conditions; any other
   * object is `{ column: value }`, whose values are bound, so request JSON cannot add SQL.
   */
  where(condition: Condition | Partial<RowOf<M>>): this {
    if (isCondition(condition)) this.conds.push(condition);
    else this.conds.push(...matchConditions(this.model.c as Record<string, ColumnRef>, this.model.table, condition as Record<string, unknown>));
    return this;
  }

  orderBy(column: ColumnRef | ColumnOf<M>, dir: Direction = 'asc'): this {
    if (dir !== 'asc' && dir !== 'desc') throw new InvalidQuery(`order direction must be 'asc' or 'desc', got ${JSON.stringify(dir)}`);
    this.orders.push({ col: this.ref(column), dir });
    return this;
  }

  limit(n: number): this {
    this.limitN = count('limit', n, 0);
    return this;
  }

  offset(n: number): this {
    this.offsetN = count('offset', n, 0);
    return this;
  }

  /** Some columns of the model, or `{ alias: Column | aggregate }` over the model and its joins. */
  select<K extends ColumnOf<M>>(...columns: K[]): Query<M, Pick<RowOf<M>, K>>;
  select<S extends Selection>(shape: S): Query<M, SelectedRow<S>>;
  select(...args: unknown[]): Query<M, unknown> {
    if (args.length === 1 && typeof args[0] === 'object' && args[0] !== null && !isColumnRef(args[0])) {
      const entries = Object.entries(args[0] as Selection);
      if (entries.length === 0) throw new InvalidQuery('select() needs at least one column');
      for (const [alias, value] of entries) {
        quoteIdent(alias);
        if (!isColumnRef(value) && !isAggregate(value)) throw new InvalidQuery(`select ${alias}: not a column or an aggregate`);
      }
      this.selection = entries as [string, ColumnRef | Aggregate<unknown>][];
    } else {
      if (args.length === 0) throw new InvalidQuery('select() needs at least one column');
      for (const name of args) if (typeof name !== 'string' || !this.codec.columns.has(name)) throw new InvalidQuery(`${this.model.table} has no column ${JSON.stringify(name)}`);
      this.selection = args as string[];
    }
    this.shape = undefined;
    return this as Query<M, unknown>;
  }

  join(model: AnyModel, on: Condition): this {
    return this.addJoin('INNER', model, on);
  }

  leftJoin(model: AnyModel, on: Condition): this {
    return this.addJoin('LEFT', model, on);
  }

  groupBy(...columns: (ColumnRef | ColumnOf<M>)[]): this {
    for (const column of columns) this.groups.push(this.ref(column));
    return this;
  }

  /** Relations to load with the rows, each level in one query: `preload('posts', 'posts.tags')`. */
  preload(...paths: string[]): this {
    this.paths.push(...paths);
    return this;
  }

  /**
   * Every matching row; more than 10,000 (the all() cap) is OrmTooManyRows: paginate or stream instead.
   * Not async: one continuation on the driver's promise, and a preload's frame only when there is one.
   */
  all(): Promise<R[]> {
    const cap = this.scope.shared.maxRows;
    const fetch = this.limitN !== undefined && this.limitN <= cap ? this.limitN : cap + 1;
    return this.run(fetch).then((rows) => {
      if (rows.length > cap) throw new OrmTooManyRows(this.model.table, cap);
      return this.paths.length > 0 && rows.length > 0 ? this.finish(rows) : (rows as R[]);
    });
  }

  async first(): Promise<R | undefined> {
    const rows = await this.run(1);
    return (await this.finish(rows))[0];
  }

  /** Rows matched (limit, offset and order ignored); with groupBy, the number of groups. */
  async count(): Promise<number> {
    const params: Value[] = [];
    const from = this.fromWhere(params);
    const text =
      this.groups.length === 0
        ? `SELECT count(*) AS "n" ${from}`
        : `SELECT count(*) AS "n" FROM (SELECT 1 AS "x" ${from} GROUP BY ${this.groupList(params)}) AS "molo_groups"`;
    const result = await exec(this.scope, this.codec.meta, text, params, { maxRows: 1 });
    return Number(result.rows[0]!.n);
  }

  async exists(): Promise<boolean> {
    const params: Value[] = [];
    const text = `SELECT 1 AS "x" ${this.fromWhere(params)} LIMIT 1`;
    const result = await exec(this.scope, this.codec.meta, text, params, { maxRows: 1 });
    return result.rows.length > 0;
  }

  /**
   * Keyset pagination over the query's order (the primary key is appended as a tiebreaker): rows
   * after the cursor, at most `limit`, and the cursor of the next page. Order columns must be
   * non-null and selected.
   */
  async paginate(options: { readonly after?: string | null; readonly limit: number }): Promise<Page<R>> {
    const limit = count('page limit', options.limit, 1);
    if (limit > MAX_PAGE_SIZE) throw new InvalidQuery(`page limit ${limit} is over ${MAX_PAGE_SIZE}`);
    if (this.limitN !== undefined || this.offsetN !== undefined) throw new InvalidQuery('paginate() replaces limit/offset: remove them');
    if (this.groups.length > 0) throw new InvalidQuery('paginate() does not work with groupBy');
    const keys = this.keysetOrder();
    const outputs = keys.map((order) => this.outputKey(order.col));
    let after: Condition | undefined;
    if (options.after !== undefined && options.after !== null) {
      const values = decodeCursor(options.after, keys.length);
      after = keysetCondition(keys, values);
    }
    const rows = await this.run(limit + 1, keys, after);
    const more = rows.length > limit;
    if (more) rows.length = limit;
    const finished = await this.finish(rows);
    const last = rows[rows.length - 1];
    return { rows: finished, next: more && last !== undefined ? encodeCursor(outputs.map((key) => last[key])) : null };
  }

  /** Rows through a cursor, in batches (no row cap); preloads are not available here. */
  async *stream(options: { readonly batchSize?: number } = {}): AsyncIterable<R> {
    if (this.paths.length > 0) throw new InvalidQuery('stream() cannot preload; load relations per batch with orm.preload');
    const { text, params } = this.build(this.limitN);
    const shape = this.decoding();
    for await (const row of this.scope.q.stream(text, params, this.scope.ctx, options)) {
      const rows = [row];
      if (shape === undefined) decodeRows(this.codec, rows);
      else decodeShape(rows, shape.names, shape.decoders);
      yield row as R;
    }
  }

  /** UPDATE every matching row (versioned models: each version is incremented); the count, or the rows with `returning`. */
  update(patch: Partial<RowOf<M>>): Promise<number>;
  update(patch: Partial<RowOf<M>>, options: { readonly returning: true }): Promise<RowOf<M>[]>;
  async update(patch: Partial<RowOf<M>>, options: { readonly returning?: boolean } = {}): Promise<number | RowOf<M>[]> {
    this.plainOnly('update');
    return updateWhere(this.scope, this.model, patch as Record<string, unknown>, (params) => this.whereSql(params, [this.model.table]), options.returning === true) as Promise<number | RowOf<M>[]>;
  }

  /** DELETE every matching row; the count, or the rows with `returning`. */
  delete(): Promise<number>;
  delete(options: { readonly returning: true }): Promise<RowOf<M>[]>;
  async delete(options: { readonly returning?: boolean } = {}): Promise<number | RowOf<M>[]> {
    this.plainOnly('delete');
    return deleteWhere(this.scope, this.model, (params) => this.whereSql(params, [this.model.table]), options.returning === true) as Promise<number | RowOf<M>[]>;
  }

  /** The SELECT this query runs (for logs and tests): text and bound values. */
  toSql(): BuiltQuery {
    const { text, params } = this.planned(this.limitN);
    return { text, params };
  }

  // ---- building ----

  private ref(column: ColumnRef | string): ColumnRef {
    if (isColumnRef(column)) return column;
    if (typeof column !== 'string') throw new InvalidQuery(`not a column of ${this.model.table}: ${describe(column)}`);
    const ref = Object.hasOwn(this.model.c, column) ? (this.model.c as Record<string, ColumnRef>)[column] : undefined;
    if (ref === undefined) throw new InvalidQuery(`${this.model.table} has no column ${JSON.stringify(column)}`);
    return ref;
  }

  private addJoin(kind: 'INNER' | 'LEFT', model: AnyModel, on: Condition): this {
    if (!isModel(model)) throw new InvalidQuery('join() needs a model made by defineModel');
    if (!isCondition(on)) throw new InvalidQuery('join() needs a condition (eq(A.c.x, B.c.y), ...)');
    if (model.table === this.model.table || this.joins.some((j) => j.model.table === model.table)) {
      throw new InvalidQuery(`${model.table} is already in the query (self-joins need raw SQL)`);
    }
    this.joins.push({ kind, model, on });
    return this;
  }

  private tables(): string[] {
    return [this.model.table, ...this.joins.map((j) => j.model.table)];
  }

  private cc(params: Value[], tables = this.tables()): CompileContext {
    return { dialect: this.scope.shared.dialect, params, tables };
  }

  private whereSql(params: Value[], tables: string[]): string | undefined {
    if (this.conds.length === 0) return undefined;
    const cc = this.cc(params, tables);
    return this.conds.map((cond) => compileCondition(cond, cc)).join(' AND ');
  }

  /** `FROM t [JOIN ...] [WHERE ...]`, binding into `params`. */
  private fromWhere(params: Value[], extra?: Condition): string {
    const tables = this.tables();
    const cc = this.cc(params, tables);
    let sql = `FROM ${this.codec.table}`;
    for (const join of this.joins) sql += ` ${join.kind} JOIN ${quoteIdent(join.model.table)} ON ${compileCondition(join.on, cc)}`;
    const where = this.whereSql(params, tables);
    const extraSql = extra === undefined ? undefined : compileCondition(extra, cc);
    if (where !== undefined || extraSql !== undefined) sql += ` WHERE ${[where, extraSql].filter((s) => s !== undefined).join(' AND ')}`;
    return sql;
  }

  private groupList(params: Value[]): string {
    const cc = this.cc(params);
    return this.groups.map((col) => columnSql(col, cc)).join(', ');
  }

  private selectList(params: Value[]): string {
    const cc = this.cc(params);
    const qualify = this.joins.length > 0;
    const selection = this.selection;
    if (selection === undefined) {
      if (!qualify) return this.codec.selectList;
      return this.codec.columnNames.map((name) => `${this.codec.table}.${quoteIdent(name)}`).join(', ');
    }
    if (typeof selection[0] === 'string') {
      return (selection as string[]).map((name) => (qualify ? `${this.codec.table}.${quoteIdent(name)}` : quoteIdent(name))).join(', ');
    }
    return (selection as [string, ColumnRef | Aggregate<unknown>][])
      .map(([alias, value]) => {
        if (isColumnRef(value)) return `${columnSql(value, cc)} AS ${quoteIdent(alias)}`;
        return `${aggregateSql(value, (col) => columnSql(col, cc))} AS ${quoteIdent(alias)}`;
      })
      .join(', ');
  }

  private orderSql(orders: readonly Order[], params: Value[]): string {
    const cc = this.cc(params);
    const sqlite = this.scope.shared.backend === 'sqlite';
    return orders
      .map(({ col, dir }) => {
        // Postgres puts NULLs last going up and first going down; SQLite the reverse unless told.
        const nulls = sqlite && col.nullable ? (dir === 'asc' ? ' NULLS LAST' : ' NULLS FIRST') : '';
        return `${columnSql(col, cc)} ${dir === 'asc' ? 'ASC' : 'DESC'}${nulls}`;
      })
      .join(', ');
  }

  private build(limit: number | undefined, orders: readonly Order[] = this.orders, extra?: Condition): BuiltQuery {
    const params: Value[] = [];
    let text = `SELECT ${this.selectList(params)} ${this.fromWhere(params, extra)}`;
    if (this.groups.length > 0) text += ` GROUP BY ${this.groupList(params)}`;
    if (orders.length > 0) text += ` ORDER BY ${this.orderSql(orders, params)}`;
    if (limit !== undefined) {
      params.push(limit);
      text += ` LIMIT $${params.length}`;
    }
    if (this.offsetN !== undefined && this.offsetN > 0) {
      // SQLite needs a LIMIT before OFFSET; -1 is its "no limit".
      if (limit === undefined) text += this.scope.shared.backend === 'sqlite' ? ' LIMIT -1' : '';
      params.push(this.offsetN);
      text += ` OFFSET $${params.length}`;
    }
    return { text, params };
  }

  /**
   * The statement with its plan: the cached text and decoder when this shape was built before, this
   * call's values bound either way; a shape with no plan (a raw `sql` condition) is built afresh.
   */
  private planned(limit: number | undefined, orders: readonly Order[] = this.orders, extra?: Condition): BuiltQuery & { readonly plan: Plan | undefined } {
    const params: Value[] = [];
    const parts = { codec: this.codec, selection: this.selection, joins: this.joins, conds: this.conds, extra, groups: this.groups, orders, limit, offset: this.offsetN };
    const key = planKey(parts, params);
    if (key !== undefined) {
      const hit = cachedPlan(key);
      if (hit !== undefined) return { text: hit.text, params, plan: hit };
    }
    const built = this.build(limit, orders, extra);
    // The key's walk binds as the build does; were they ever to differ, the build alone is used.
    if (key === undefined || built.params.length !== params.length) return { ...built, plan: undefined };
    const shape = this.decoding();
    let decode: Plan['decode'];
    if (shape === undefined) decode = this.codec.decodeNames.length === 0 ? undefined : this.codec.decodeRow;
    else decode = shape.names.length === 0 ? undefined : shapeRowDecoder(shape.names, shape.decoders);
    const plan: Plan = { text: built.text, decode };
    keepPlan(key, plan);
    return { ...built, plan };
  }

  /** Not async (see exec): a failure to build still comes back as a rejection. */
  private run(limit: number | undefined, orders?: readonly Order[], extra?: Condition): Promise<Row[]> {
    let planned: BuiltQuery & { readonly plan: Plan | undefined };
    try {
      planned = this.planned(limit, orders, extra);
    } catch (error) {
      return Promise.reject(error);
    }
    const { text, params, plan } = planned;
    return exec(this.scope, this.codec.meta, text, params, limit === undefined ? undefined : { maxRows: limit }).then((result) => this.decoded(result.rows, plan));
  }

  private decoded(rows: Row[], plan: Plan | undefined): Row[] {
    if (plan !== undefined) {
      decodePlanRows(plan, rows);
      return rows;
    }
    const shape = this.decoding();
    if (shape === undefined) decodeRows(this.codec, rows);
    else decodeShape(rows, shape.names, shape.decoders);
    return rows;
  }

  /** undefined: the model's own decoders; else decoders per output alias. */
  private decoding(): { names: string[]; decoders: Decoder[] } | undefined {
    const selection = this.selection;
    if (selection === undefined || typeof selection[0] === 'string') return undefined;
    if (this.shape === undefined) {
      const backend = this.scope.shared.backend;
      this.shape = shapeDecoders(
        backend,
        (selection as [string, ColumnRef | Aggregate<unknown>][]).map(([alias, value]) => [alias, isColumnRef(value) ? value.kind : aggregateDecoder(backend, value)] as const),
      );
    }
    return this.shape;
  }

  private async finish(rows: Row[]): Promise<R[]> {
    if (this.paths.length > 0 && rows.length > 0) {
      if (this.selection !== undefined && typeof this.selection[0] !== 'string') throw new InvalidQuery('preload needs the model\'s rows, not a custom select({...})');
      await preload(this.scope, this.model, rows, this.paths);
    }
    return rows as R[];
  }

  private plainOnly(what: string): void {
    if (this.joins.length > 0 || this.groups.length > 0 || this.orders.length > 0 || this.limitN !== undefined || this.offsetN !== undefined || this.selection !== undefined || this.paths.length > 0) {
      throw new InvalidQuery(`${what}() takes only where(): no joins, order, limit, offset, select or preload`);
    }
  }

  /** The order with the main table's primary key appended, every column non-null. */
  private keysetOrder(): Order[] {
    const orders = [...this.orders];
    for (const pk of this.codec.pk) {
      if (!orders.some((o) => o.col.table === this.model.table && o.col.name === pk)) orders.push({ col: this.ref(pk), dir: 'asc' });
    }
    for (const { col } of orders) if (col.nullable) throw new InvalidQuery(`paginate() orders by ${col.table}.${col.name}, which is nullable; order by non-null columns`);
    return orders;
  }

  /** Where an order column shows in the output rows (for the cursor). */
  private outputKey(col: ColumnRef): string {
    const selection = this.selection;
    if (selection === undefined || typeof selection[0] === 'string') {
      const names = selection === undefined ? this.codec.columnNames : (selection as string[]);
      if (col.table === this.model.table && names.includes(col.name)) return col.name;
    } else {
      for (const [alias, value] of selection as [string, ColumnRef | Aggregate<unknown>][]) {
        if (isColumnRef(value) && value.table === col.table && value.name === col.name) return alias;
      }
    }
    throw new InvalidQuery(`paginate() orders by ${col.table}.${col.name}: select it too, the cursor is read from the rows`);
  }
}

function count(what: string, n: number, min: number): number {
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidQuery(`${what} must be an integer ≥ ${min}, got ${describe(n)}`);
  return n;
}

/** A caller's value for an error message, whatever it is (a null-prototype object has no toString). */
function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 80) ?? typeof value;
  } catch {
    return typeof value;
  }
}

/** Rows after `values` in this order: (a > x) OR (a = x AND b > y) OR ..., each `>` a `<` going down. */
function keysetCondition(orders: readonly Order[], values: readonly unknown[]): Condition {
  const branches: Condition[] = [];
  for (let i = 0; i < orders.length; i++) {
    const items: Condition[] = [];
    for (let j = 0; j < i; j++) items.push(eq(orders[j]!.col, values[j]));
    items.push((orders[i]!.dir === 'asc' ? gt : lt)(orders[i]!.col, values[i] as never));
    branches.push(items.length === 1 ? items[0]! : and(...items));
  }
  return branches.length === 1 ? branches[0]! : or(...branches);
}

/**
 * Statement plans: a query's SQL text and row decoder cached by its shape (model, selection, joins,
 * condition tree with operators and columns, order, limit/offset presence, backend), so a query
 * built again with new values skips rebuilding its text and decoder. Values never enter a plan or
 * its key: each call walks its conditions afresh (checking every node) and binds its own values.
 */
import type { Row, Value } from '../values.js';
import { isAggregate, type Aggregate } from './aggregates.js';
import type { ModelCodec } from './codec.js';
import type { RowDecoder } from './compiled.js';
import { columnKey, conditionKey, type Condition } from './filters.js';
import { isColumnRef, type AnyModel, type ColumnRef } from './model.js';

/** A cached statement: its text and how to decode its rows (undefined: the model's own decoder). */
export interface Plan {
  readonly text: string;
  readonly decode: RowDecoder | undefined;
}

/** What a SELECT is built from, as the query builder holds it. */
export interface PlanParts {
  readonly codec: ModelCodec;
  readonly selection: string[] | [string, ColumnRef | Aggregate<unknown>][] | undefined;
  readonly joins: readonly { readonly kind: string; readonly model: AnyModel; readonly on: Condition }[];
  readonly conds: readonly Condition[];
  readonly extra: Condition | undefined;
  readonly groups: readonly ColumnRef[];
  readonly orders: readonly { readonly col: ColumnRef; readonly dir: string }[];
  readonly limit: number | undefined;
  readonly offset: number | undefined;
}

/** Shapes kept at most, as the compiled shape decoders: shapes come from the queries an application writes. */
export const PLAN_CACHE_MAX = 1_024;

const plans = new Map<string, Plan>();
const codecIds = new WeakMap<ModelCodec, number>();
let nextCodecId = 0;

/**
 * The shape key of a SELECT, its values bound into `params` in statement order (join conditions,
 * where, extra condition, limit, offset); undefined when a part has no plan (a raw `sql` condition).
 */
export function planKey(parts: PlanParts, params: Value[]): string | undefined {
  const { codec } = parts;
  let id = codecIds.get(codec);
  if (id === undefined) codecIds.set(codec, (id = nextCodecId++));
  let key = `${codec.backend}\u0003${id}\u0003`;
  const selection = parts.selection;
  if (selection === undefined) key += '*';
  else {
    for (const entry of selection) {
      if (typeof entry === 'string') key += `${entry.length}:${entry}`;
      else {
        const [alias, value] = entry;
        key += `${alias.length}:${alias}`;
        if (isColumnRef(value)) key += `c${columnKey(value)}`;
        else if (isAggregate(value)) key += `a${value.fn}(${value.col === undefined ? '*' : columnKey(value.col)})`;
        else return undefined;
      }
    }
  }
  key += '\u0003';
  const dialect = codec.dialect;
  for (const join of parts.joins) {
    const on = conditionKey(join.on, dialect, params);
    if (on === undefined) return undefined;
    key += `${join.kind}${join.model.table.length}:${join.model.table}${on}`;
  }
  key += '\u0003';
  for (const cond of parts.conds) {
    const part = conditionKey(cond, dialect, params);
    if (part === undefined) return undefined;
    key += part;
  }
  key += '\u0003';
  if (parts.extra !== undefined) {
    const part = conditionKey(parts.extra, dialect, params);
    if (part === undefined) return undefined;
    key += part;
  }
  key += '\u0003';
  for (const col of parts.groups) key += columnKey(col);
  key += '\u0003';
  for (const order of parts.orders) key += `${order.dir}\u0001${columnKey(order.col)}`;
  key += '\u0003';
  if (parts.limit !== undefined) {
    params.push(parts.limit);
    key += 'L';
  }
  if (parts.offset !== undefined && parts.offset > 0) {
    params.push(parts.offset);
    key += 'O';
  }
  return key;
}

/** Forgets every plan (tests compare a cached plan with a fresh build). */
export function clearPlans(): void {
  plans.clear();
}

export function cachedPlan(key: string): Plan | undefined {
  return plans.get(key);
}

/** Keeps a plan; past the cap the oldest shape makes room (insertion order). */
export function keepPlan(key: string, plan: Plan): void {
  if (plans.size >= PLAN_CACHE_MAX) {
    const oldest = plans.keys().next();
    if (oldest.done !== true) plans.delete(oldest.value);
  }
  plans.set(key, plan);
}

/** Decodes rows in place with a plan's decoder. */
export function decodePlanRows(plan: Plan, rows: Row[]): void {
  const decode = plan.decode;
  if (decode === undefined) return;
  for (let r = 0; r < rows.length; r++) decode(rows[r]!);
}

/** Plans held now (for tests of the cap). */
export function planCount(): number {
  return plans.size;
}

/**
 * Relations between models: belongsTo, hasMany and manyToMany (through a join model), declared
 * after the models (so two models can point at each other) and registered on the source model by
 * name. Loading is lazy (`orm.load(rel, row)`) or eager (`query.preload('posts', 'posts.tags')`):
 * each relation of each level is ONE query for all the parent rows, never one per row: the keys
 * travel as one array parameter (`= ANY($1)` on Postgres, `IN (SELECT value FROM json_each($1))` on
 * SQLite). Only bytes keys on SQLite, which JSON cannot carry, fall back to `IN ($1, ...)` lists of
 * at most 1,000 keys (the bound-parameter cap), one query per 1,000.
 */
import { InvalidModel, InvalidQuery } from './errors.js';
import type { Row, Value } from '../values.js';
import { codecFor, decodeRows, keyOf, type ModelCodec } from './codec.js';
import { quoteIdent } from './dialect.js';
import { exec, type Scope } from './execute.js';
import type { AnyModel, ColumnOf, RowOf } from './model.js';
import { decoderFor, encodeValue } from './types.js';

export type RelationKind = 'belongsTo' | 'hasMany' | 'manyToMany';

export interface Relation<S extends AnyModel = AnyModel, T extends AnyModel = AnyModel, K extends RelationKind = RelationKind> {
  readonly name: string;
  readonly kind: K;
  readonly source: S;
  readonly target: T;
  /** belongsTo: the source's column holding the target's key; hasMany: the target's column holding the source's key. */
  readonly foreignKey?: string;
  /** manyToMany: the join model and its two key columns. */
  readonly through?: AnyModel;
  readonly sourceKey?: string;
  readonly targetKey?: string;
  /** The value a preload put on `row` (typed): the target row (or null), or the list of them. */
  of(row: object): K extends 'belongsTo' ? RowOf<T> | null : RowOf<T>[];
}

/** Keys per query in the IN-list fallback, under the 1,024 bound-parameter cap. */
const IN_CHUNK = 1000;

function singleKey(model: AnyModel, role: string): string {
  if (model.meta.primaryKey.length !== 1) throw new InvalidModel(model.table, `${role} of a relation needs a single-column primary key`);
  return model.meta.primaryKey[0]!;
}

function register<R extends Relation>(rel: R): R {
  const source = rel.source;
  if (source.meta.columns.some((c) => c.name === rel.name)) throw new InvalidModel(source.table, `relation ${rel.name} has the name of a column`);
  if (source.relations.has(rel.name)) throw new InvalidModel(source.table, `relation ${rel.name} is declared twice`);
  source.relations.set(rel.name, rel);
  return rel;
}

function requireColumn(model: AnyModel, column: string): void {
  if (!model.meta.columns.some((c) => c.name === column)) throw new InvalidModel(model.table, `relation key ${column} is not a column`);
}

function reader(name: string): Relation['of'] {
  return ((row: object) => {
    const value = (row as Record<string, unknown>)[name];
    if (value === undefined) throw new InvalidQuery(`relation ${name} was not loaded on this row (preload it, or use orm.load)`);
    return value;
  }) as Relation['of'];
}

/** `Post belongsTo User` through `Post.authorId` → `User`'s primary key. */
export function belongsTo<S extends AnyModel, T extends AnyModel>(source: S, name: string, target: T, options: { readonly foreignKey: ColumnOf<S> }): Relation<S, T, 'belongsTo'> {
  requireColumn(source, options.foreignKey);
  singleKey(target, 'the target');
  return register({ name, kind: 'belongsTo', source, target, foreignKey: options.foreignKey, of: reader(name) } as unknown as Relation<S, T, 'belongsTo'>);
}

/** `User hasMany Post` through `Post.authorId` → `User`'s primary key. */
export function hasMany<S extends AnyModel, T extends AnyModel>(source: S, name: string, target: T, options: { readonly foreignKey: ColumnOf<T> }): Relation<S, T, 'hasMany'> {
  requireColumn(target, options.foreignKey);
  singleKey(source, 'the source');
  return register({ name, kind: 'hasMany', source, target, foreignKey: options.foreignKey, of: reader(name) } as unknown as Relation<S, T, 'hasMany'>);
}

/** `Post manyToMany Tag` through `PostTag` (`postId` → Post, `tagId` → Tag). */
export function manyToMany<S extends AnyModel, T extends AnyModel, J extends AnyModel>(
  source: S,
  name: string,
  target: T,
  options: { readonly through: J; readonly sourceKey: ColumnOf<J>; readonly targetKey: ColumnOf<J> },
): Relation<S, T, 'manyToMany'> {
  requireColumn(options.through, options.sourceKey);
  requireColumn(options.through, options.targetKey);
  singleKey(source, 'the source');
  singleKey(target, 'the target');
  return register({
    name,
    kind: 'manyToMany',
    source,
    target,
    through: options.through,
    sourceKey: options.sourceKey,
    targetKey: options.targetKey,
    of: reader(name),
  } as unknown as Relation<S, T, 'manyToMany'>);
}

type PathTree = Map<string, PathTree>;

/** `['posts', 'posts.tags', 'author']` → { posts: { tags }, author }. */
export function parsePaths(paths: readonly string[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    if (typeof path !== 'string' || path.length === 0) throw new InvalidQuery('a preload path must be a non-empty string');
    let node = root;
    for (const part of path.split('.')) {
      if (part.length === 0) throw new InvalidQuery(`bad preload path ${JSON.stringify(path)}`);
      let next = node.get(part);
      if (next === undefined) node.set(part, (next = new Map()));
      node = next;
    }
  }
  return root;
}

/** Loads the relations named by `paths` onto `rows` (in place): one query per relation node. */
export async function preload(scope: Scope, model: AnyModel, rows: Row[], paths: readonly string[]): Promise<void> {
  await loadTree(scope, model, rows, parsePaths(paths));
}

async function loadTree(scope: Scope, model: AnyModel, rows: Row[], tree: PathTree): Promise<void> {
  if (tree.size === 0) return;
  const work: Promise<void>[] = [];
  for (const [name, sub] of tree) {
    const rel = model.relations.get(name) as Relation | undefined;
    if (rel === undefined) throw new InvalidQuery(`${model.table} has no relation ${JSON.stringify(name)}`);
    // Sibling relations load concurrently: their queries pipeline on one connection or spread on the pool.
    work.push(loadRelation(scope, rel, rows).then((children) => loadTree(scope, rel.target, children, sub)));
  }
  await Promise.all(work);
}

/** Loads one relation onto `rows` and returns the target rows it loaded (for the next level). */
export async function loadRelation(scope: Scope, rel: Relation, rows: readonly Row[]): Promise<Row[]> {
  switch (rel.kind) {
    case 'belongsTo':
      return loadBelongsTo(scope, rel, rows);
    case 'hasMany':
      return loadHasMany(scope, rel, rows);
    case 'manyToMany':
      return loadManyToMany(scope, rel, rows);
  }
}

/** Distinct non-null values of `column` over `rows`, keyed so int32 and int64 keys meet. */
function distinctKeys(rows: readonly Row[], column: string): unknown[] {
  const seen = new Set<unknown>();
  const out: unknown[] = [];
  for (const row of rows) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    const key = keyOf(value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out;
}

/** Runs `SELECT <select> FROM <from> WHERE <column> IN keys ORDER BY <order>`: one statement (see the top). */
async function selectIn(scope: Scope, codec: ModelCodec, select: string, from: string, column: string, kind: Parameters<typeof encodeValue>[0], keys: readonly unknown[], order: string): Promise<Row[]> {
  if (keys.length === 0) return [];
  const encoded: Value[] = keys.map((k) => encodeValue(kind, k, column));
  const maxRows = scope.shared.maxRows * 10;
  const dialect = scope.shared.dialect;
  const array = dialect.arrayParam(encoded);
  if (array !== undefined) {
    const result = await exec(scope, codec.meta, `SELECT ${select} FROM ${from} WHERE ${dialect.inArray(column, '$1')} ORDER BY ${order}`, [array], { maxRows });
    return result.rows;
  }
  const out: Row[] = [];
  for (let start = 0; start < encoded.length; start += IN_CHUNK) {
    const chunk = encoded.slice(start, start + IN_CHUNK);
    const slots = chunk.map((_, i) => `$${i + 1}`).join(', ');
    const result = await exec(scope, codec.meta, `SELECT ${select} FROM ${from} WHERE ${column} IN (${slots}) ORDER BY ${order}`, chunk, { maxRows });
    for (const row of result.rows) out.push(row);
  }
  return out;
}

async function loadBelongsTo(scope: Scope, rel: Relation, rows: readonly Row[]): Promise<Row[]> {
  const fk = rel.foreignKey!;
  const target = codecFor(rel.target, scope.shared.backend);
  const pk = target.pk[0]!;
  const found = decodeRows<Row>(target, await selectIn(scope, target, target.selectList, target.table, quoteIdent(pk), target.columns.get(pk)!.kind, distinctKeys(rows, fk), quoteIdent(pk)));
  const byKey = new Map<unknown, Row>();
  for (const row of found) byKey.set(keyOf(row[pk]), row);
  for (const row of rows) {
    const value = row[fk];
    row[rel.name] = value === null || value === undefined ? null : (byKey.get(keyOf(value)) ?? null);
  }
  return found;
}

async function loadHasMany(scope: Scope, rel: Relation, rows: readonly Row[]): Promise<Row[]> {
  const fk = rel.foreignKey!;
  const source = codecFor(rel.source, scope.shared.backend);
  const target = codecFor(rel.target, scope.shared.backend);
  const pk = source.pk[0]!;
  const order = target.pk.map((c) => quoteIdent(c)).join(', ');
  const found = decodeRows<Row>(target, await selectIn(scope, target, target.selectList, target.table, quoteIdent(fk), target.columns.get(fk)!.kind, distinctKeys(rows, pk), order));
  const groups = new Map<unknown, Row[]>();
  for (const row of found) {
    const key = keyOf(row[fk]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  for (const row of rows) row[rel.name] = groups.get(keyOf(row[pk])) ?? [];
  return found;
}

const SOURCE_ALIAS = '__molo_src';

async function loadManyToMany(scope: Scope, rel: Relation, rows: readonly Row[]): Promise<Row[]> {
  const backend = scope.shared.backend;
  const source = codecFor(rel.source, backend);
  const target = codecFor(rel.target, backend);
  const through = codecFor(rel.through!, backend);
  const pk = source.pk[0]!;
  const targetPk = target.pk[0]!;
  const sourceKey = rel.sourceKey!;
  const select = `${target.meta.columns.map((c) => `${target.table}.${quoteIdent(c.name)}`).join(', ')}, ${through.table}.${quoteIdent(sourceKey)} AS "${SOURCE_ALIAS}"`;
  const from = `${target.table} JOIN ${through.table} ON ${through.table}.${quoteIdent(rel.targetKey!)} = ${target.table}.${quoteIdent(targetPk)}`;
  const column = `${through.table}.${quoteIdent(sourceKey)}`;
  const raw = await selectIn(scope, target, select, from, column, through.columns.get(sourceKey)!.kind, distinctKeys(rows, pk), `${target.table}.${quoteIdent(targetPk)}`);
  const decodeSource = decoderFor(backend, through.columns.get(sourceKey)!.kind);
  const groups = new Map<unknown, Row[]>();
  for (const row of raw) {
    let src = row[SOURCE_ALIAS];
    delete row[SOURCE_ALIAS];
    if (decodeSource !== undefined && src !== null) src = decodeSource(src);
    const key = keyOf(src);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  decodeRows(target, raw);
  for (const row of rows) row[rel.name] = groups.get(keyOf(row[pk])) ?? [];
  return raw;
}

/** Lazy loading: the relation's value for one row (the row is left as it was). */
export async function loadOne(scope: Scope, rel: Relation, row: Row): Promise<unknown> {
  const holder: Row = { ...row };
  await loadRelation(scope, rel, [holder]);
  return holder[rel.name];
}

// The ORM: models declared once, a query builder, relations, optimistic locking and write events, on Postgres and SQLite.
export { field, sqlExpr, NOW, RANDOM_UUID, FIELD_KINDS, Field, type FieldKind, type FieldSpec, type DefaultSpec, type SqlExpr, type Fields, type AnyField, type ValueOf } from './fields.js';
export {
  defineModel,
  columnOf,
  constraintName,
  identifierProblem,
  isColumnRef,
  MAX_IDENTIFIER_BYTES,
  type Model,
  type AnyModel,
  type ModelMeta,
  type ColumnMeta,
  type IndexMeta,
  type ModelOptions,
  type ModelIndexOption,
  type ModelHooks,
  type HookContext,
  type HealContext,
  type OrmHealer,
  type ColumnRef,
  type ColumnRefs,
  type RowOf,
  type InsertOf,
  type ColumnOf,
} from './model.js';
export { TYPE_MAPPING, columnType, encodeValue, decoderFor, renderTypesDoc, type TypeMapping } from './types.js';
export { dialectFor, quoteIdent, likeToGlob, POSTGRES, SQLITE, type Dialect, type DdlOptions } from './dialect.js';
export { sql, compileSql, isSqlFragment, type SqlFragment, type SqlIdent, type CompiledSql } from './sql.js';
export { eq, ne, lt, lte, gt, gte, inList, notInList, like, isNull, isNotNull, and, or, not, where, type Condition } from './filters.js';
export { count, sum, avg, min, max, type Aggregate } from './aggregates.js';
export { Query, MAX_PAGE_SIZE, type Page, type Direction, type Selection, type SelectedRow, type BuiltQuery } from './query.js';
export { MAX_CURSOR_LENGTH } from './cursor.js';
export { belongsTo, hasMany, manyToMany, type Relation, type RelationKind } from './relations.js';
export { WriteEventChannel, EVENT_DEFAULTS, EVENT_CAPS, type OrmWriteEvent, type WriteListener, type WriteOp, type PendingEvent } from './events.js';
export type { InsertManyOptions, UpsertOptions } from './write.js';
export { Orm, type OrmOptions, type PrimaryKey } from './orm.js';
export { Syncer, type SyncerOptions, type SyncReport, type SchemaHealth } from './sync.js';
export { introspect, introspectTable, normalizeType, relateTypes, sameType, diffModel, type SchemaSnapshot, type TableSchema, type ColumnSchema, type IndexSchema, type TablePlan, type SchemaChange, type Drift } from './schema/index.js';
export { classify, checkWidening, Healer, HEALER_DEFAULTS, HEALER_LIMITS, rebuildTable, type HealPlan, type Fatal, type HealRecord, type HealerOptions } from './heal/index.js';
export { Migrator, createMigrationFile, loadMigrations, checksumOf, readLedger, MIGRATIONS_TABLE, type MigratorOptions, type MigrationStatus } from './migrations/index.js';
export * from './errors.js';

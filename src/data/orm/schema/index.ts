// Schema: introspection per backend, normalized types, and the diff of models against a database.
export { introspect, introspectTable } from './introspect.js';
export { normalizeType, relateTypes, sameType, sqliteAffinity, varcharLength, type TypeRelation } from './normalize.js';
export { columnOfTable, type ColumnSchema, type IndexSchema, type SchemaSnapshot, type TableSchema } from './snapshot.js';
export { diffModel, hasChanges, metaOf, type Drift, type DriftKind, type SchemaChange, type TablePlan } from './diff.js';

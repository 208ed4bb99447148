// Migrations: append-only files, the schema_migrations ledger, and the migrator.
export { checksumOf, createMigrationFile, loadMigrations, migrationSlug, nextMigrationNumber, MAX_MIGRATION_BYTES, MAX_MIGRATIONS, MIGRATION_FILE, type MigrationSource } from './files.js';
export { ensureLedger, ledgerExists, readLedger, MIGRATIONS_TABLE, type LedgerEntry, type LedgerKind, type LedgerRow } from './ledger.js';
export { Migrator, runScript, type MigrationProgress, type MigrationState, type MigrationStatus, type MigrationStatusEntry, type MigratorOptions, type UpOptions } from './migrator.js';
export { splitStatements } from './split.js';

/**
 * Schema on SQLite in a temp directory: a migration written by hand and applied by the Migrator,
 * the Syncer adding what the models have and the table lacks (additively, once), the Healer
 * creating a missing table when a write trips over it, and the `schema_migrations` ledger.
 * Run: npm run example examples/schema.ts
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { openSqlite } from 'molo/data';
import { createMigrationFile, defineModel, field, Healer, Migrator, Orm, readLedger, Syncer } from 'molo/data/orm';

const User = defineModel('users', {
  id: field.int64().primaryKey().autoIncrement(),
  name: field.string(80),
  email: field.string(120).nullable(), // not in the migration: the Syncer adds it
});
const AuditEntry = defineModel('audit', {
  id: field.int64().primaryKey().autoIncrement(),
  what: field.string(200),
});

const dir = mkdtempSync(join(tmpdir(), 'molo-schema-example-'));
const system = new ActorSystem();
try {
  const db = await openSqlite(system, { file: join(dir, 'app.db') });

  // Migrations: numbered files, what `molo migrate new` / `molo migrate up` do.
  const migrations = join(dir, 'migrations');
  const [file] = await createMigrationFile(migrations, 'create users');
  writeFileSync(file!, 'CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, name varchar(80) NOT NULL);\n');
  const migrator = new Migrator(db, { dir: migrations });
  const before = await migrator.status();
  console.log(`migrations: ${before.pending} pending; up applied ${(await migrator.up()).join(', ')}`);

  // Sync: creates what is missing, never changes or drops; a second run issues no DDL.
  const syncer = new Syncer(db, { models: [User] });
  const first = await syncer.sync();
  const changes = first.applied.flatMap((plan) => plan.changes.map((c) => `${c.kind} ${c.table}${'column' in c ? `.${c.column}` : ''}`));
  console.log(`sync: ${changes.join(', ')} (${first.statements} statement(s)); again: ${(await syncer.sync()).statements} statement(s)`);

  // Heal: the audit table does not exist; the write fails, the Healer creates it, the ORM retries once.
  const healer = new Healer({ db, models: [User, AuditEntry], journalDir: join(migrations, 'auto') });
  const orm = new Orm(db, { healer });
  await orm.insert(User, { name: 'Ada', email: 'ada@example.com' });
  await orm.insert(AuditEntry, { what: 'created Ada' });
  console.log(`heal: audit rows ${await orm.query(AuditEntry).count()}, journal files ${readdirSync(join(migrations, 'auto')).length}`);

  for (const row of await readLedger(db)) console.log(`ledger: ${row.kind} ${row.id.replace(/^auto\/\w+?_(audit)/, 'auto/<stamp>_$1')}`);
  const after = await migrator.status();
  console.log(`status: ${after.applied} applied, ${after.pending} pending, ${after.heals} heal(s) journaled`);
  await db.close();
} finally {
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}

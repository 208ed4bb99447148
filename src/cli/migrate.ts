/**
 * `molo migrate status|up|new <name>`: the migrations of a directory against a database, from a
 * terminal. The database is `--database-url postgres://...`, `--sqlite FILE`, or `$MOLO_DATABASE_URL`
 * (a postgres:// URL, or sqlite:FILE), then `$DATABASE_URL`. Every other `molo` command's `--url` is
 * the admin surface's, so the database has a flag of its own; `--url` is still read here, as before.
 */
import { startProgress, type Progress } from './progress.js';
import { ActorSystem } from '../actors/index.js';
import type { Database } from '../data/database.js';
import { createMigrationFile } from '../data/orm/migrations/files.js';
import { Migrator, type MigrationStatus } from '../data/orm/migrations/migrator.js';
import { createPostgresPool } from '../data/postgres.js';
import { openSqlite } from '../data/sqlite/index.js';
import { ExitCode, parseCommandLine, type CliIo } from './run.js';

export const MIGRATE_USAGE = `usage: molo migrate <command> [--database-url URL | --sqlite FILE] [--dir DIR]

commands:
  status        every migration: applied, pending, changed (file edited after it ran), missing
  up            apply the pending migrations in order, one line each
  new <name>    create the next-numbered empty migration file (--variants: .pg.sql and .sqlite.sql)

options:
  --database-url URL
                 Postgres: postgres://user:password@host:port/database?sslmode=require
                 (default: $MOLO_DATABASE_URL, then $DATABASE_URL; PG* variables fill the rest;
                 --url is the older name of this flag)
  --sqlite FILE  SQLite database file (or MOLO_DATABASE_URL=sqlite:FILE)
  --dir DIR      the migrations directory (default: migrations)
  --variants     with new: one file per dialect
  --json         print the status, the applied migrations or the created files as JSON

exit codes: 0 ok, 1 failed (a changed migration, a failed one, no database), 2 usage
`;

class MigrateUsage extends Error {}

interface Invocation {
  readonly command: 'status' | 'up' | 'new' | 'help';
  readonly name?: string;
  readonly dir: string;
  readonly url?: string;
  readonly sqlite?: string;
  readonly variants: boolean;
  readonly json: boolean;
}

/** Runs `molo migrate` with `argv` (after the word `migrate`); resolves with the exit code. */
export async function runMigrateCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let invocation: Invocation;
  try {
    invocation = parse(argv, io.env);
  } catch (error) {
    io.stderr(`molo migrate: ${error instanceof Error ? error.message : String(error)}\n\n${MIGRATE_USAGE}`);
    return ExitCode.Usage;
  }
  try {
    return await execute(invocation, io);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    io.stderr(`molo migrate: ${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.Failed;
  }
}

function parse(argv: readonly string[], env: CliIo['env']): Invocation {
  const { values, positionals } = parseCommandLine(
    argv,
    {
      'database-url': { type: 'string' },
      url: { type: 'string' },
      sqlite: { type: 'string' },
      dir: { type: 'string', default: 'migrations' },
      variants: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    (detail) => new MigrateUsage(detail),
  );
  const base = { dir: values.dir!, variants: values.variants === true, json: values.json === true };
  if (values.help === true || positionals[0] === 'help') return { command: 'help', ...base };
  const command = positionals[0];
  if (command === undefined) throw new MigrateUsage('no command given');
  if (command !== 'status' && command !== 'up' && command !== 'new') throw new MigrateUsage(`unknown command '${command}'`);
  if (command === 'new') {
    if (positionals.length !== 2) throw new MigrateUsage('new takes one name: molo migrate new add_users');
    return { command, name: positionals[1]!, ...base };
  }
  if (positionals.length > 1) throw new MigrateUsage(`${command} takes no arguments, got: ${positionals.slice(1).join(' ')}`);
  if (values.url !== undefined && values['database-url'] !== undefined) throw new MigrateUsage('give --database-url once (--url is its older name)');
  let url = values['database-url'] ?? values.url;
  if (url !== undefined && values.sqlite !== undefined) throw new MigrateUsage('give --database-url or --sqlite, not both');
  let sqlite = values.sqlite;
  if (url === undefined && sqlite === undefined) {
    const fromEnv = env['MOLO_DATABASE_URL'] || env['DATABASE_URL'];
    if (fromEnv === undefined || fromEnv === '') throw new MigrateUsage('no database: give --database-url postgres://..., --sqlite FILE, or set MOLO_DATABASE_URL (or DATABASE_URL)');
    if (fromEnv.startsWith('sqlite:')) sqlite = fromEnv.slice('sqlite:'.length);
    else url = fromEnv;
  }
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) throw new MigrateUsage(`--database-url must be a postgres:// URL (for SQLite use --sqlite FILE)${/^https?:/.test(url) ? '; an http URL is the admin surface, which migrate does not use' : ''}`);
  return { command, ...base, ...(url === undefined ? {} : { url }), ...(sqlite === undefined ? {} : { sqlite }) };
}

async function execute(invocation: Invocation, io: CliIo): Promise<ExitCode> {
  if (invocation.command === 'help') {
    io.stdout(MIGRATE_USAGE);
    return ExitCode.Ok;
  }
  if (invocation.command === 'new') {
    const paths = await createMigrationFile(invocation.dir, invocation.name!, { variants: invocation.variants });
    if (invocation.json) io.stdout(`${JSON.stringify({ created: paths }, null, 2)}\n`);
    else for (const path of paths) io.stdout(`created ${path}\n`);
    return ExitCode.Ok;
  }
  // The one line this command prints says why it failed; the crash reports of the connections it
  // retried would bury it. MOLO_LOG_LEVEL brings them back for a closer look.
  const system = new ActorSystem({ node: 'molo-migrate', logger: process.env.MOLO_LOG_LEVEL === undefined ? false : undefined });
  let db: Database | undefined;
  try {
    db = await open(system, invocation);
    const migrator = new Migrator(db, { dir: invocation.dir });
    if (invocation.command === 'status') {
      const status = await migrator.status();
      io.stdout(invocation.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
      return status.changed > 0 ? ExitCode.Failed : ExitCode.Ok;
    }
    // The applied lines go to stdout (what ran); a terminal also gets a bar on stderr.
    let bar: Progress | undefined;
    const applied = await migrator
      .up({
        onProgress: (progress) => {
          if (progress.event === 'applied') {
            if (!invocation.json) io.stdout(`applied  ${progress.id}  (${Math.round(progress.durationMs)} ms)  [${progress.index + 1}/${progress.total}]\n`);
            if (io.progressStream !== undefined) (bar ??= startProgress(io, 'migrations', progress.total)).update(progress.index + 1, progress.id);
          } else if (progress.event === 'skipped' && !invocation.json) io.stdout(`skipped  ${progress.id}  (${progress.why})\n`);
        },
      })
      .finally(() => bar?.stop());
    if (invocation.json) io.stdout(`${JSON.stringify({ applied }, null, 2)}\n`);
    else io.stdout(applied.length === 0 ? 'nothing to apply: the database is up to date\n' : `${applied.length} migration${applied.length === 1 ? '' : 's'} applied\n`);
    return ExitCode.Ok;
  } finally {
    await db?.close();
    system.shutdown();
  }
}

async function open(system: ActorSystem, invocation: Invocation): Promise<Database> {
  if (invocation.sqlite !== undefined) return openSqlite(system, { file: invocation.sqlite, readers: 0, checkpointIntervalMs: 0 });
  // The URL as libpq reads it (sslmode and the rest); PG* variables fill what it leaves out.
  const db = await createPostgresPool(system, { url: invocation.url!, applicationName: 'molo-migrate', min: 1, max: 1 });
  try {
    // A server that is down fails here, with the reason, rather than as the first statement's timeout.
    await db.ready();
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

export function formatStatus(status: MigrationStatus): string {
  const width = Math.max(0, ...status.entries.map((entry) => entry.id.length));
  const lines = status.entries.map((entry) => {
    const id = entry.id.padEnd(width);
    switch (entry.state) {
      case 'applied':
        return `applied  ${id}  ${entry.appliedAt!.toISOString()}`;
      case 'pending':
        return `pending  ${id}`;
      case 'changed':
        return `CHANGED  ${id}  file edited after it was applied (recorded sha256 ${entry.recordedChecksum!.slice(0, 12)}…, now ${entry.checksum!.slice(0, 12)}…)`;
      case 'missing':
        return `missing  ${id}  applied ${entry.appliedAt!.toISOString()}, but no file has this id`;
    }
  });
  const total = status.entries.length;
  lines.push(
    `${total} migration${total === 1 ? '' : 's'}: ${status.applied} applied, ${status.pending} pending, ${status.changed} changed, ${status.missing} missing; ${status.heals} heal${status.heals === 1 ? '' : 's'} journaled`,
  );
  return `${lines.map((line) => line.trimEnd()).join('\n')}\n`;
}

/**
 * Migration files on disk: `NNNN_name.sql`, or `NNNN_name.pg.sql` / `NNNN_name.sqlite.sql` where the
 * dialects differ. A migration's id is `NNNN_name` whatever its variant, so one id is applied once
 * per database on either backend. Checksums are sha256 over the text with CRLF turned into LF, so a
 * checkout that rewrites line endings does not look like an edit.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MigrationInvalid } from '../errors.js';
import type { Backend } from '../../values.js';

/** `0001_create_users.sql`, `0002_add_index.pg.sql`: number, name, optional dialect. */
export const MIGRATION_FILE = /^(\d{4,9})_([a-z0-9][a-z0-9_]{0,99})(?:\.(pg|sqlite))?\.sql$/;
/** A migration file larger than this is refused (it is SQL someone reviews, not a data dump). */
export const MAX_MIGRATION_BYTES = 16 * 1024 * 1024;
/** Migration files one directory may hold. */
export const MAX_MIGRATIONS = 10_000;

export interface MigrationSource {
  /** `NNNN_name`: the key recorded in schema_migrations. */
  readonly id: string;
  readonly number: number;
  readonly name: string;
  /** The file used for this backend (the dialect variant if there is one, else the plain file). */
  readonly file: string;
  readonly sql: string;
  /** sha256 (hex) of the file's text, line endings normalized. */
  readonly checksum: string;
}

/** sha256 hex of `text` with CRLF normalized to LF. */
export function checksumOf(text: string): string {
  return createHash('sha256').update(text.replace(/\r\n/g, '\n'), 'utf8').digest('hex');
}

const VARIANT_BACKEND = { pg: 'postgres', sqlite: 'sqlite' } as const;

interface Variants {
  number: number;
  name: string;
  plain?: string;
  postgres?: string;
  sqlite?: string;
}

/**
 * The migrations in `dir` for `backend`, ordered by number then name. Files that are not `.sql`
 * and subdirectories (`auto/`) are ignored; a `.sql` file with a bad name, a variant without a
 * counterpart for the other backend, or an oversized file fails with MigrationInvalid.
 */
export async function loadMigrations(dir: string, backend: Backend): Promise<MigrationSource[]> {
  const ids = await scan(dir);
  const sources: MigrationSource[] = [];
  for (const [id, variants] of ids) {
    const file = variants[backend] ?? variants.plain;
    if (file === undefined) {
      const other = backend === 'postgres' ? 'sqlite' : 'pg';
      throw new MigrationInvalid(join(dir, id), `has a .${other}.sql variant but neither ${id}.${backend === 'postgres' ? 'pg' : 'sqlite'}.sql nor ${id}.sql`);
    }
    const path = join(dir, file);
    const info = await stat(path);
    if (info.size > MAX_MIGRATION_BYTES) throw new MigrationInvalid(path, `${info.size} bytes, more than ${MAX_MIGRATION_BYTES} (MAX_MIGRATION_BYTES)`);
    const sql = await readFile(path, 'utf8');
    sources.push({ id, number: variants.number, name: variants.name, file: path, sql, checksum: checksumOf(sql) });
  }
  return sources.sort((a, b) => a.number - b.number || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

async function scan(dir: string): Promise<Map<string, Variants>> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new MigrationInvalid(dir, `cannot read the directory: ${(error as Error).message}`);
  }
  const ids = new Map<string, Variants>();
  let count = 0;
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.sql')) continue;
    const match = MIGRATION_FILE.exec(entry.name);
    if (match === null) throw new MigrationInvalid(join(dir, entry.name), 'a migration is named NNNN_name.sql (or .pg.sql / .sqlite.sql): digits, underscore, lowercase letters, digits and underscores');
    if (++count > MAX_MIGRATIONS) throw new MigrationInvalid(dir, `more than ${MAX_MIGRATIONS} migration files (MAX_MIGRATIONS)`);
    const [, digits, name, dialect] = match;
    const id = `${digits}_${name}`;
    let variants = ids.get(id);
    if (variants === undefined) ids.set(id, (variants = { number: Number(digits), name: name! }));
    const slot = dialect === undefined ? 'plain' : VARIANT_BACKEND[dialect as 'pg' | 'sqlite'];
    variants[slot] = entry.name;
  }
  return ids;
}

/** The next free number in `dir`: one more than the highest, at least 1. */
export async function nextMigrationNumber(dir: string): Promise<number> {
  let highest = 0;
  for (const variants of (await scan(dir)).values()) highest = Math.max(highest, variants.number);
  return highest + 1;
}

/** `Add Users!` → `add_users`; what `molo migrate new` names a file after. */
export function migrationSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 100)
    .replace(/_+$/, '');
}

/**
 * Creates the next-numbered, empty migration in `dir` (made if missing): `NNNN_<slug>.sql`, or
 * with `variants` the pair `.pg.sql` and `.sqlite.sql`. Returns the paths created.
 */
export async function createMigrationFile(dir: string, name: string, options: { readonly variants?: boolean } = {}): Promise<string[]> {
  const slug = migrationSlug(name);
  if (slug.length === 0) throw new MigrationInvalid(name, 'the name needs at least one letter or digit');
  await mkdir(dir, { recursive: true });
  const number = await nextMigrationNumber(dir);
  const id = `${String(number).padStart(4, '0')}_${slug}`;
  const files = options.variants === true ? [`${id}.pg.sql`, `${id}.sqlite.sql`] : [`${id}.sql`];
  const paths = files.map((file) => join(dir, file));
  // 'wx': never overwrite, so two `new` racing cannot clobber each other's file.
  for (const path of paths) await writeFile(path, '', { flag: 'wx' });
  return paths;
}

/**
 * The heal journal: every heal is written down before it is applied, as a file under
 * `migrations/auto/` (for a person to review and turn into a numbered migration for the other
 * environments) and as a `schema_migrations` row of kind 'heal' in the same transaction as its
 * DDL (so the row exists exactly when the change does). No journal write, no DDL, no retry.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Queryable } from '../../database.js';
import type { Backend } from '../../values.js';
import { checksumOf } from '../migrations/files.js';
import { ensureLedger, record } from '../migrations/ledger.js';
import type { HealPlanKind } from './classify.js';

/** What a heal did, returned to the ORM (which retries once) and attached to a second failure as `healRecord`. */
export interface HealRecord {
  /** The ledger id: `auto/<UTC stamp>_<table>_<plan>`. */
  readonly id: string;
  readonly backend: Backend;
  readonly table: string;
  readonly plan: HealPlanKind;
  /** The statements applied (empty when `applied` is false). */
  readonly sql: readonly string[];
  /** Why: the error's message and what the heal changes. */
  readonly reason: string;
  /** SQLSTATE or SQLite code that triggered the heal. */
  readonly triggerCode: string;
  readonly at: Date;
  /** sha256 of the SQL (as in the journal file and row). */
  readonly checksum: string;
  /** The journal file, when one was written. */
  readonly file?: string;
  /** False: the schema already had it (healed meanwhile by another process); nothing ran, nothing journaled. */
  readonly applied: boolean;
}

let sequence = 0;

/** `20240501T120000123Z`: sorts as time, safe in a file name. */
function stamp(at: Date): string {
  return at.toISOString().replace(/[-:.]/g, '');
}

/** A table name reduced to what is safe in a file name. */
function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9_]+/g, '_').slice(0, 60) || 'table';
}

export function healId(table: string, plan: HealPlanKind, at: Date): string {
  sequence = (sequence + 1) % 1000;
  return `auto/${stamp(at)}${String(sequence).padStart(3, '0')}_${slug(table)}_${plan}`;
}

export function healSqlText(statements: readonly string[]): string {
  return statements.map((sql) => `${sql};`).join('\n');
}

/** The journal file's text: a header of SQL comments, then the statements. */
export function journalText(rec: HealRecord): string {
  const comment = (text: string): string => text.replace(/[\r\n]+/g, ' ');
  return [
    `-- molo auto-heal ${rec.id} (written before it was applied; review, then copy into a numbered migration for other environments)`,
    `-- backend: ${rec.backend}`,
    `-- table: ${comment(rec.table)}`,
    `-- plan: ${rec.plan}`,
    `-- reason: ${comment(rec.reason)}`,
    `-- trigger: ${rec.triggerCode}`,
    `-- at: ${rec.at.toISOString()}`,
    `-- checksum: sha256:${rec.checksum}`,
    healSqlText(rec.sql),
    '',
  ].join('\n');
}

export class HealJournal {
  constructor(readonly dir: string) {}

  /** The path the record's file goes to. */
  pathOf(rec: Pick<HealRecord, 'id' | 'backend'>): string {
    return join(this.dir, `${rec.id.slice('auto/'.length)}.${rec.backend === 'postgres' ? 'pg' : 'sqlite'}.sql`);
  }

  /** A record for `statements`, with its checksum and file path. */
  record(fields: Omit<HealRecord, 'checksum' | 'file' | 'applied'>): HealRecord {
    const rec: HealRecord = { ...fields, checksum: checksumOf(healSqlText(fields.sql)), applied: true };
    return { ...rec, file: this.pathOf(rec) };
  }

  /** Writes the record's file (the directory is made if missing); rewriting it on a retried attempt is harmless. */
  async writeFile(rec: HealRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(rec.file ?? this.pathOf(rec), journalText(rec), 'utf8');
  }

  /** The ledger row, through `q` (the transaction the DDL runs in). */
  async writeRow(q: Queryable, rec: HealRecord): Promise<void> {
    await ensureLedger(q);
    await record(q, {
      id: rec.id,
      kind: 'heal',
      checksum: rec.checksum,
      appliedAt: rec.at,
      sql: healSqlText(rec.sql),
      reason: rec.reason,
      triggerCode: rec.triggerCode,
    });
  }
}

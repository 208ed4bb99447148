/**
 * One batch as the sink applies it: the keys' last writers are read up front in a few statements (per
 * model, up to 400 keys each), decisions are made against that view as it moves entry by entry, and
 * the winners are written at the end in a few multi-row statements with their last-writer rows. A
 * key written twice in the batch is written once, as its last winner. This replaces three statements
 * per entry (each a round trip to the database, or to the SQLite worker) with a handful per batch.
 */
import type { Transaction } from '../database.js';
import type { OplogEntry } from './contract.js';
import type { Oplog } from './oplog.js';
import type { ReplicatedTarget } from './targets.js';

export interface KeyWriter {
  readonly ts: string;
  readonly instance: string;
  readonly version: number;
  readonly deleted: boolean;
  readonly prev: string | null;
}

interface KeyRow extends Record<string, unknown> {
  key: string;
  ts: string;
  instance: string;
  version: bigint | number;
  deleted: boolean | number;
  prev: string | null;
}

const KEYS_PER_READ = 400;
const id = (model: string, key: string): string => `${model}\u0000${key}`;

export class ApplyBatch {
  readonly #keys = new Map<string, KeyWriter | null>();
  readonly #pending = new Map<string, { readonly target: ReplicatedTarget; readonly entry: OplogEntry }>();

  constructor(
    private readonly tx: Transaction,
    private readonly oplog: Oplog,
  ) {}

  /** Reads the last writer of every key of `entries` (absent keys are remembered as such). */
  async prefetch(entries: readonly OplogEntry[]): Promise<void> {
    const byModel = new Map<string, Set<string>>();
    for (const e of entries) {
      if (this.#keys.has(id(e.model, e.key))) continue;
      let keys = byModel.get(e.model);
      if (keys === undefined) byModel.set(e.model, (keys = new Set()));
      keys.add(e.key);
    }
    for (const [model, keySet] of byModel) {
      const keys = [...keySet];
      for (const key of keys) this.#keys.set(id(model, key), null);
      for (let start = 0; start < keys.length; start += KEYS_PER_READ) {
        const chunk = keys.slice(start, start + KEYS_PER_READ);
        const rows = (
          await this.tx.query<KeyRow>(
            `SELECT key, ts, instance, version, deleted, prev FROM _molo_replica_keys WHERE model = $1 AND key IN (${chunk.map((_, i) => `$${i + 2}`).join(', ')})`,
            [model, ...chunk],
            undefined,
            { maxRows: chunk.length },
          )
        ).rows;
        for (const row of rows) {
          this.#keys.set(id(model, row.key), { ts: row.ts, instance: row.instance, version: Number(row.version), deleted: row.deleted === true || row.deleted === 1, prev: row.prev });
        }
      }
    }
  }

  /** The key's last accepted writer here, as this batch has moved it so far (null: none). */
  writer(e: OplogEntry): KeyWriter | null {
    return this.#keys.get(id(e.model, e.key)) ?? null;
  }

  /** Accepts `e` as the key's new state: written at `flush`. */
  stage(target: ReplicatedTarget, e: OplogEntry): void {
    const k = id(e.model, e.key);
    this.#pending.set(k, { target, entry: e });
    this.#keys.set(k, { ts: e.ts, instance: e.instance, version: e.version, deleted: e.op === 'delete', prev: e.prev ?? null });
  }

  /** The key's data here (for a conflict's loser or a resolver): what this batch staged, else the table's row. */
  async localData(target: ReplicatedTarget, e: OplogEntry): Promise<Record<string, unknown> | null> {
    const staged = this.#pending.get(id(e.model, e.key));
    if (staged !== undefined) return staged.entry.op === 'delete' ? null : staged.entry.data;
    return target.read(this.tx, e.key);
  }

  /** Writes every staged winner (per target, multi-row where the target can) and their last-writer rows. */
  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const byTarget = new Map<ReplicatedTarget, OplogEntry[]>();
    const all: OplogEntry[] = [];
    for (const { target, entry } of this.#pending.values()) {
      let list = byTarget.get(target);
      if (list === undefined) byTarget.set(target, (list = []));
      list.push(entry);
      all.push(entry);
    }
    for (const [target, entries] of byTarget) {
      if (target.writeMany !== undefined) await target.writeMany(this.tx, entries);
      else for (const e of entries) await target.write(this.tx, e);
    }
    await this.oplog.recordKeys(this.tx, all);
    this.#pending.clear();
  }
}

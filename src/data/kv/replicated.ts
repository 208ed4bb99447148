/**
 * A KV store that declares `replicated: { policy }` (docs/replication.md): each write (set, delete,
 * compare-and-set) runs in one transaction with its oplog entry, so a committed write always has its
 * entry and a refused CAS or a rolled-back write never does. An entry carries the value and the
 * expiry as an absolute deadline (ms since the epoch): every replica expires the key at the same
 * moment on its own, so expiry needs no entry. LRU evictions past `maxKeys` are local and not
 * replicated. Versions stay per instance (each store's own counter): `setIfVersion` guards this
 * instance's writes; between instances the declared policy decides (`lww` or `hook`; `optimistic`
 * would compare counters that are not comparable across instances, so it is refused).
 *
 * Remote entries are written through {@link kvTarget} inside the sink's transaction, without
 * appending again: they keep their origin.
 */
import type { DataContext } from '../context.js';
import type { Database, Queryable, Transaction } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import type { OplogEntry } from '../replication/contract.js';
import type { Oplog, PendingEntry } from '../replication/oplog.js';
import type { ReplicatedOption, ReplicatedTarget } from '../replication/targets.js';
import type { KvBackendFactory, KvSqlBackend } from './sql-backend.js';
import { toBuffer } from './sql-backend.js';

export interface KvReplicationOptions {
  /** This instance's oplog. */
  readonly oplog: Oplog;
  readonly policy: ReplicatedOption;
}

/** The name a KV store's entries carry as their `model`: apart from ORM tables of the same name. */
export function kvModelName(table: string): string {
  return `kv:${table}`;
}

export function checkKvReplication(value: unknown): KvReplicationOptions {
  const option = value as Partial<KvReplicationOptions> | null;
  if (typeof option !== 'object' || option === null || typeof option.oplog?.append !== 'function') {
    throw new InvalidDataConfig('kv.replicated.oplog', "a replicated KV store needs this instance's oplog");
  }
  const policy = option.policy?.policy;
  if (policy !== 'lww' && policy !== 'hook') {
    throw new InvalidDataConfig('kv.replicated.policy', `must be { policy: 'lww' } or { policy: 'hook', resolve }: KV versions are per instance, so 'optimistic' cannot compare them (got ${JSON.stringify(policy)})`);
  }
  return { oplog: option.oplog, policy: option.policy! };
}

/**
 * The backend's statements on a transaction: the backends take a database, and use of it is only
 * `query` and `transaction` (a savepoint here, for a chunked SQLite value) on the write paths.
 */
function onTransaction(tx: Transaction): Database {
  return { backend: tx.backend, query: tx.query.bind(tx), transaction: (fn: (inner: Transaction) => Promise<unknown>, options?: { readonly ctx?: DataContext }) => tx.transaction(fn, { ctx: options?.ctx }) } as unknown as Database;
}

/** Runs replicated writes: the statement and its entry in one transaction, the oplog woken after commit. */
export class KvOplogWriter {
  readonly model: string;

  constructor(
    private readonly db: Database,
    private readonly factory: KvBackendFactory,
    private readonly table: string,
    readonly replication: KvReplicationOptions,
  ) {
    this.model = kvModelName(table);
  }

  async write<T>(key: string, work: (sql: KvSqlBackend) => Promise<T>, entryOf: (result: T) => Omit<PendingEntry, 'model' | 'key' | 'version'> | undefined, ctx?: DataContext): Promise<T> {
    let appended = 0;
    const result = await this.db.transaction(
      async (tx) => {
        const done = await work(this.factory(onTransaction(tx), this.table));
        const entry = entryOf(done);
        if (entry !== undefined) {
          await this.replication.oplog.append(tx, [{ model: this.model, key, version: 0, ...entry }], ctx);
          appended = 1;
        }
        return done;
      },
      { ctx },
    );
    this.replication.oplog.committed(appended);
    return result;
  }
}

/** A live key's value and its expiry deadline (what an entry carries), or undefined. */
async function readWithExpiry(sql: KvSqlBackend, q: Queryable, table: string, key: Buffer, now: number, ctx?: DataContext): Promise<{ value: Buffer; expiresAt: number | null } | undefined> {
  const entry = await sql.get(key, now, ctx);
  if (entry === undefined) return undefined;
  // `table` passed checkTable: a safe identifier.
  const row = (await q.query<{ expires_at: bigint | number | null }>(`SELECT expires_at FROM ${table} WHERE key = $1`, [key], ctx, { maxRows: 1 })).rows[0];
  return { value: entry.value, expiresAt: row?.expires_at === null || row?.expires_at === undefined ? null : Number(row.expires_at) };
}

/** A replicated SQL KV store as a sink target (what `OplogApplier` writes remote entries through). */
export function kvTarget(parts: { readonly db: Database; readonly factory: KvBackendFactory; readonly table: string; readonly policy: ReplicatedOption; readonly now: () => number }): ReplicatedTarget {
  const model = kvModelName(parts.table);
  const backendOn = (q: Queryable): KvSqlBackend => parts.factory('transaction' in q ? onTransaction(q as Transaction) : (q as Database), parts.table);
  const dataOf = (value: Buffer, expiresAt: number | null): Record<string, unknown> => ({ value, expiresAt });
  return {
    model,
    replicated: parts.policy,
    async write(q, e: OplogEntry, ctx) {
      const sql = backendOn(q);
      const key = Buffer.from(e.key);
      if (e.op === 'delete' || e.data === null) {
        await sql.delete(key, parts.now(), ctx);
        return;
      }
      const value = e.data.value;
      const expiresAt = e.data.expiresAt;
      if (!(value instanceof Uint8Array) || (expiresAt !== null && typeof expiresAt !== 'number')) throw new InvalidDataConfig('kv.replicated', `malformed KV entry for ${model}`);
      await sql.set(key, value, expiresAt, parts.now(), ctx);
    },
    async read(q, key, ctx) {
      const row = await readWithExpiry(backendOn(q), q, parts.table, Buffer.from(key), parts.now(), ctx);
      return row === undefined ? null : dataOf(row.value, row.expiresAt);
    },
    async page(afterKey, limit) {
      const keys = (
        await parts.db.query<{ key: string; ts: string; instance: string; deleted: boolean | number }>(
          `SELECT key, ts, instance, deleted FROM _molo_replica_keys WHERE model = $1 AND key > $2 ORDER BY key LIMIT $3`,
          [model, afterKey ?? '', limit],
          undefined,
          { maxRows: limit },
        )
      ).rows;
      const sql = parts.factory(parts.db, parts.table);
      const out: OplogEntry[] = [];
      for (const k of keys) {
        const deleted = k.deleted === true || k.deleted === 1;
        // Expired (or evicted) here: sent as a delete, as it reads.
        const row = deleted ? undefined : await readWithExpiry(sql, parts.db, parts.table, Buffer.from(k.key), parts.now());
        out.push({ seq: 0, instance: k.instance, ts: k.ts, model, key: k.key, op: row === undefined ? 'delete' : 'upsert', version: 0, data: row === undefined ? null : dataOf(toBuffer(row.value), row.expiresAt) });
      }
      return out;
    },
  };
}

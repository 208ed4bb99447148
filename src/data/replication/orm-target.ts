/**
 * A replicated ORM model as a sink target: remote upserts are written as INSERT ... ON CONFLICT
 * (primary key) DO UPDATE of every column the entry carries (the version column too: the origin's
 * version is the row's version), deletes as DELETE by the key columns the entry carries. These
 * statements bypass the ORM's write path on purpose: an applied entry keeps its origin and is not
 * appended to the local oplog again.
 */
import type { DataContext } from '../context.js';
import type { Database, Queryable } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import { codecFor, decodeRows, encodeColumn, type ModelCodec } from '../orm/codec.js';
import { quoteIdent } from '../orm/dialect.js';
import type { AnyModel } from '../orm/model.js';
import { keyText } from '../orm/write-oplog.js';
import type { Row, Value } from '../values.js';
import type { OplogEntry } from './contract.js';
import type { ReplicatedOption, ReplicatedTarget } from './targets.js';

/** Parameters per multi-row statement: under the 1,024 the data layer allows. */
const MAX_PARAMS = 900;

/** The key columns' values from the oplog's key text (the inverse of `keyText`). */
function keyParamsOf(codec: ModelCodec, key: string): Value[] {
  const parts = codec.pk.length === 1 ? [key] : (JSON.parse(key) as string[]);
  return codec.pk.map((c, i) => {
    const kind = codec.columns.get(c)!.kind;
    const text = parts[i]!;
    const value = kind === 'int64' ? BigInt(text) : kind === 'int32' || kind === 'double' ? Number(text) : kind === 'bool' ? text === 'true' : text;
    return encodeColumn(codec, c, value);
  });
}

export function ormTarget(db: Database, model: AnyModel): ReplicatedTarget {
  const replicated: ReplicatedOption | undefined = model.replicated;
  if (replicated === undefined) throw new InvalidDataConfig('replication.targets', `model ${model.table} does not declare replicated`);
  const codec = codecFor(model, db.backend);
  const where = codec.pk.map((c, i) => `${quoteIdent(c)} = $${i + 1}`).join(' AND ');
  const pkList = codec.pk.map((c) => quoteIdent(c)).join(', ');
  return {
    model: codec.meta.table,
    replicated,
    async write(q: Queryable, e: OplogEntry, ctx?: DataContext) {
      if (e.op === 'delete') {
        await q.query(`DELETE FROM ${codec.table} WHERE ${where}`, keyParamsOf(codec, e.key), ctx);
        return;
      }
      const names = codec.meta.columns.map((c) => c.name).filter((n) => e.data !== null && e.data[n] !== undefined);
      const params = names.map((n) => encodeColumn(codec, n, e.data![n]));
      const sets = names.filter((n) => !codec.pk.includes(n)).map((n) => `${quoteIdent(n)} = excluded.${quoteIdent(n)}`);
      const conflict = sets.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${sets.join(', ')}`;
      await q.query(
        `INSERT INTO ${codec.table} (${names.map((n) => quoteIdent(n)).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (${pkList}) ${conflict}`,
        params,
        ctx,
      );
    },
    async writeMany(q: Queryable, entries: readonly OplogEntry[], ctx?: DataContext) {
      // Upserts of the same columns go together, as many rows per statement as the parameter cap allows; deletes one by one.
      const groups = new Map<string, { names: string[]; entries: OplogEntry[] }>();
      for (const e of entries) {
        if (e.op === 'delete' || e.data === null) {
          await this.write(q, e, ctx);
          continue;
        }
        const names = codec.meta.columns.map((c) => c.name).filter((n) => e.data![n] !== undefined);
        const signature = names.join(',');
        let group = groups.get(signature);
        if (group === undefined) groups.set(signature, (group = { names, entries: [] }));
        group.entries.push(e);
      }
      for (const { names, entries: rows } of groups.values()) {
        const sets = names.filter((n) => !codec.pk.includes(n)).map((n) => `${quoteIdent(n)} = excluded.${quoteIdent(n)}`);
        const conflict = sets.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${sets.join(', ')}`;
        const columns = names.map((n) => quoteIdent(n)).join(', ');
        const perStatement = Math.max(1, Math.floor(MAX_PARAMS / names.length));
        for (let start = 0; start < rows.length; start += perStatement) {
          const chunk = rows.slice(start, start + perStatement);
          const params: Value[] = [];
          const values = chunk.map((e) => {
            const first = params.length;
            for (const n of names) params.push(encodeColumn(codec, n, e.data![n]));
            return `(${names.map((_, i) => `$${first + i + 1}`).join(', ')})`;
          });
          await q.query(`INSERT INTO ${codec.table} (${columns}) VALUES ${values.join(', ')} ON CONFLICT (${pkList}) ${conflict}`, params, ctx);
        }
      }
    },
    async read(q: Queryable, key: string, ctx?: DataContext) {
      const rows = (await q.query(`SELECT ${codec.selectList} FROM ${codec.table} WHERE ${where}`, keyParamsOf(codec, key), ctx, { maxRows: 1 })).rows;
      return rows.length === 0 ? null : decodeRows<Row>(codec, rows)[0]!;
    },
    async page(afterKey: string | null, limit: number) {
      // Keys in their text order, joined with each key's last writer (its stamp and version).
      const keys = (
        await db.query<{ key: string; ts: string; instance: string; version: bigint | number; deleted: boolean | number }>(
          `SELECT key, ts, instance, version, deleted FROM _molo_replica_keys WHERE model = $1 AND key > $2 ORDER BY key LIMIT $3`,
          [codec.meta.table, afterKey ?? '', limit],
          undefined,
          { maxRows: limit },
        )
      ).rows;
      const out: OplogEntry[] = [];
      for (const k of keys) {
        const deleted = k.deleted === true || k.deleted === 1;
        const data = deleted ? null : await this.read(db, k.key);
        const row = data ?? {};
        out.push({ seq: 0, instance: k.instance, ts: k.ts, model: codec.meta.table, key: k.key, op: deleted || data === null ? 'delete' : 'upsert', version: Number(k.version), data: deleted || data === null ? keyData(codec, k.key) : row });
      }
      return out;
    },
  };
}

function keyData(codec: ModelCodec, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const parts = codec.pk.length === 1 ? [key] : (JSON.parse(key) as string[]);
  codec.pk.forEach((c, i) => (out[c] = parts[i]));
  return out;
}


/**
 * The extended protocol's messages for one op, written with pg-protocol's `serialize`:
 *
 * - first use of a SQL text: Parse (unnamed) + Bind + Describe portal + Execute + Sync; text results.
 * - second use: Parse (named `molo_s<n>`) + Describe statement + Bind + Execute + Sync; text results
 *   (the columns are not known when the Bind is written).
 * - while that answer is still on its way: Bind (named) + Execute + Sync; the columns come from the
 *   statement's description, which the server sends first.
 * - described: Bind (named, parameters typed by the statement) + Execute + Sync; binary results when
 *   every column has a binary decoder (pg-protocol asks one format for all columns).
 *
 * Every message is checked against MAX_ROW_BYTES before anything is written, so a refused
 * statement leaves nothing half-written.
 */
import { serialize } from 'pg-protocol';
import { MAX_ROW_BYTES } from '../database.js';
import { DbError, EncodeFailed, RowTooLarge } from '../errors.js';
import type { Op } from './ops.js';
import { StatementState, type Statement, type StatementCache } from './statement-cache.js';
import type { PgTypes } from './types/index.js';

const EXECUTE_SYNC = Buffer.concat([serialize.execute(), serialize.sync()]);
const DESCRIBE_EXECUTE_SYNC = Buffer.concat([serialize.describe({ type: 'P' }), serialize.execute(), serialize.sync()]);
const DESCRIBE_PORTAL = serialize.describe({ type: 'P' });
const FLUSH = serialize.flush();

/** What the writer needs of the connection. */
export interface WriteTarget {
  readonly cache: StatementCache;
  write(message: Buffer): void;
}

export class QueryWriter {
  #oids: readonly number[] | null = null;
  readonly #encode = (value: unknown, index: number): string | Buffer | null => {
    const oids = this.#oids;
    return this.types.encodeParam(value, oids === null ? 0 : (oids[index] ?? 0));
  };

  constructor(readonly types: PgTypes) {}

  /** A statement with values (or a PreparedStatement's). */
  extended(target: WriteTarget, op: Op): void {
    const cache = target.cache;
    const params = op.params;
    if (op.oneOff) return this.#unnamed(target, op, params);
    const stmt = cache.use(op.sql);
    switch (stmt.state) {
      case StatementState.Ready: {
        const binary = stmt.binary;
        let bind: Buffer;
        try {
          bind = this.#bind(stmt.name!, params, stmt.paramOids, binary);
        } catch (error) {
          // Its parameter types may be stale (a column widened since it was prepared): the next use
          // prepares afresh instead of refusing the same value client-side forever.
          cache.drop(stmt, true);
          throw error;
        }
        this.closeEvicted(target);
        target.write(bind);
        target.write(EXECUTE_SYNC);
        op.stmt = stmt;
        op.binary = binary;
        op.shape = binary ? stmt.binaryShape : stmt.textShape;
        return;
      }
      case StatementState.Preparing: {
        const bind = this.#bind(stmt.name!, params, null, false);
        this.closeEvicted(target);
        target.write(bind);
        target.write(EXECUTE_SYNC);
        op.stmt = stmt;
        return;
      }
      default: {
        if (stmt.uses >= 2 && cache.capacity > 0) return this.#prepareAndRun(target, op, stmt);
        this.#unnamed(target, op, params);
      }
    }
  }

  /** Parse, Bind, Describe, Execute, Sync on the unnamed statement: nothing cached. */
  #unnamed(target: WriteTarget, op: Op, params: readonly unknown[]): void {
    const parse = checked(serialize.parse({ text: op.sql }));
    const bind = this.#bind('', params, null, false);
    this.closeEvicted(target);
    target.write(parse);
    target.write(bind);
    target.write(DESCRIBE_EXECUTE_SYNC);
  }

  #prepareAndRun(target: WriteTarget, op: Op, stmt: Statement): void {
    const name = target.cache.nameFor(stmt);
    let parse: Buffer;
    let bind: Buffer;
    try {
      parse = checked(serialize.parse({ name, text: op.sql }));
      bind = this.#bind(name, op.params, null, false);
    } catch (error) {
      stmt.state = StatementState.Unprepared;
      stmt.name = null;
      throw error;
    }
    this.closeEvicted(target);
    target.write(parse);
    target.write(serialize.describe({ type: 'S', name }));
    target.write(bind);
    target.write(EXECUTE_SYNC);
    op.stmt = stmt;
    op.preparing = true;
  }

  /** PrepareRequest: Parse + Describe + Sync, nothing executed. */
  prepare(target: WriteTarget, op: Op): void {
    const cache = target.cache;
    const stmt = cache.peek(op.sql) ?? cache.use(op.sql);
    if (stmt.state !== StatementState.Unprepared || cache.capacity === 0) {
      // Prepared meanwhile (or nothing can be kept): only check the text.
      target.write(checked(serialize.parse({ text: op.sql })));
      target.write(serialize.sync());
      return;
    }
    const name = cache.nameFor(stmt);
    const parse = checked(serialize.parse({ name, text: op.sql }));
    this.closeEvicted(target);
    target.write(parse);
    target.write(serialize.describe({ type: 'S', name }));
    target.write(serialize.sync());
    op.stmt = stmt;
  }

  /**
   * A cursor's first batch: the unnamed portal, Execute with a row limit, then Flush rather than
   * Sync (a Sync would end the implicit transaction, and the portal with it). A described cached
   * statement is bound in binary; its shape is returned (no RowDescription will come), else null.
   */
  cursor(target: WriteTarget, op: Op, batchSize: number): Op['shape'] {
    const stmt = target.cache.peek(op.sql);
    const execute = serialize.execute({ rows: batchSize });
    if (stmt !== undefined && stmt.state === StatementState.Ready) {
      const bind = this.#bind(stmt.name!, op.params, stmt.paramOids, stmt.binary);
      target.write(bind);
      target.write(execute);
      target.write(FLUSH);
      return stmt.binary ? stmt.binaryShape : stmt.textShape;
    }
    const parse = checked(serialize.parse({ text: op.sql }));
    const bind = this.#bind('', op.params, null, false);
    target.write(parse);
    target.write(bind);
    target.write(DESCRIBE_PORTAL);
    target.write(execute);
    target.write(FLUSH);
    return null;
  }

  #bind(statement: string, params: readonly unknown[], oids: readonly number[] | null, binary: boolean): Buffer {
    this.#oids = oids;
    let bind: Buffer;
    try {
      bind = serialize.bind({ statement, values: params as unknown[], binary, valueMapper: this.#encode });
    } catch (error) {
      if (error instanceof DbError) throw error;
      throw new EncodeFailed(error instanceof Error ? error.message : String(error), { cause: error });
    } finally {
      this.#oids = null;
    }
    return checked(bind);
  }

  /** Close messages for statements the cache pushed out, ahead of the next op's own messages. */
  closeEvicted(target: WriteTarget): void {
    const evicted = target.cache.evicted;
    if (evicted.length === 0) return;
    for (const stmt of evicted) target.write(serialize.close({ type: 'S', name: stmt.name! }));
    evicted.length = 0;
  }
}

/** Messages larger than the cap are refused before they are written. */
export function checked(message: Buffer): Buffer {
  if (message.length > MAX_ROW_BYTES) throw new RowTooLarge(message.length, MAX_ROW_BYTES);
  return message;
}

/**
 * A minimal wire client for the codec tests: it hands back each DataRow cell as the byte range the
 * server sent (inside the receive buffer, with other bytes around it), which is exactly what the
 * codecs read in production. Outgoing messages use pg-protocol's serializer; nothing here decodes values.
 */
import { connect, type Socket } from 'node:net';
import { serialize } from 'pg-protocol';
import { PgTypes } from '../../../src/data/pg/types/index.js';
import { type FreshDatabase, freshDatabase } from '../../support/pg.js';

export interface Cell {
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number;
}

export interface RawResult {
  readonly fields: readonly { readonly name: string; readonly oid: number; readonly format: number }[];
  readonly rows: readonly (Cell | null)[][];
}

export class ServerError extends Error {
  constructor(
    message: string,
    readonly sqlstate: string,
  ) {
    super(message);
  }
}

interface Waiter {
  fields: { name: string; oid: number; format: number }[];
  rows: (Cell | null)[][];
  error?: ServerError;
  resolve: (r: RawResult) => void;
  reject: (e: Error) => void;
}

export class RawPg {
  private pending: Buffer = Buffer.alloc(0);
  private readonly waiters: Waiter[] = [];
  private ready: (() => void) | undefined;
  private failure: ((e: Error) => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (e) => this.failAll(e));
    socket.on('close', () => this.failAll(new Error('connection closed')));
  }

  static async connect(opts: { host: string; port: number; user: string; database: string; params?: Record<string, string> }): Promise<RawPg> {
    const socket = connect(opts.port, opts.host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const pg = new RawPg(socket);
    const startup = new Promise<void>((resolve, reject) => {
      pg.ready = resolve;
      pg.failure = reject;
    });
    socket.write(serialize.startup({ user: opts.user, database: opts.database, client_encoding: 'UTF8', DateStyle: 'ISO, MDY', ...opts.params }));
    await startup;
    return pg;
  }

  /** Runs one statement through the extended protocol; `resultFormat` applies to every column. */
  query(sql: string, params: (string | Buffer | null)[] = [], resultFormat: 0 | 1 = 0, paramTypes: number[] = []): Promise<RawResult> {
    return new Promise<RawResult>((resolve, reject) => {
      this.waiters.push({ fields: [], rows: [], resolve, reject });
      this.socket.write(
        Buffer.concat([
          serialize.parse({ text: sql, types: paramTypes }),
          serialize.bind({ values: params, binary: resultFormat === 1 }),
          serialize.describe({ type: 'P' }),
          serialize.execute(),
          serialize.sync(),
        ]),
      );
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end(serialize.end());
    });
  }

  private failAll(e: Error): void {
    this.failure?.(e);
    for (const w of this.waiters.splice(0)) w.reject(e);
  }

  private onData(chunk: Buffer): void {
    // Cells stay ranges inside this buffer (never sliced out), as in the real connection.
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    while (this.pending.length - at >= 5) {
      const type = this.pending[at]!;
      const len = this.pending.readInt32BE(at + 1);
      if (this.pending.length - at < 1 + len) break;
      this.onMessage(type, this.pending, at + 5, at + 1 + len);
      at += 1 + len;
    }
    this.pending = this.pending.subarray(at);
  }

  private onMessage(type: number, buf: Buffer, start: number, end: number): void {
    const w = this.waiters[0];
    switch (String.fromCharCode(type)) {
      case 'Z':
        if (this.ready !== undefined) {
          this.ready();
          this.ready = undefined;
          this.failure = undefined;
        } else if (w !== undefined) {
          this.waiters.shift();
          if (w.error !== undefined) w.reject(w.error);
          else w.resolve({ fields: w.fields, rows: w.rows });
        }
        return;
      case 'T': {
        let i = start + 2;
        const n = buf.readInt16BE(start);
        for (let k = 0; k < n; k++) {
          const z = buf.indexOf(0, i);
          const name = buf.toString('utf8', i, z);
          i = z + 1;
          w?.fields.push({ name, oid: buf.readUInt32BE(i + 6), format: buf.readInt16BE(i + 16) });
          i += 18;
        }
        return;
      }
      case 'D': {
        const n = buf.readInt16BE(start);
        let i = start + 2;
        const row: (Cell | null)[] = [];
        for (let k = 0; k < n; k++) {
          const len = buf.readInt32BE(i);
          i += 4;
          if (len === -1) row.push(null);
          else {
            row.push({ buf, start: i, end: i + len });
            i += len;
          }
        }
        w?.rows.push(row);
        return;
      }
      case 'E': {
        const fields = new Map<string, string>();
        let i = start;
        while (buf[i] !== 0 && i < end) {
          const code = String.fromCharCode(buf[i]!);
          const z = buf.indexOf(0, i + 1);
          fields.set(code, buf.toString('utf8', i + 1, z));
          i = z + 1;
        }
        const err = new ServerError(fields.get('M') ?? 'server error', fields.get('C') ?? '');
        if (this.failure !== undefined) this.failure(err);
        else if (w !== undefined) w.error = err;
        return;
      }
      default:
        // R (trust auth ok), S, K, 1, 2, n, C, N: nothing the codec tests need.
        return;
    }
  }
}

/** A fresh database, one raw connection to it, and the codecs under test. */
export class CodecServer {
  private constructor(
    readonly db: FreshDatabase,
    readonly pg: RawPg,
    readonly types: PgTypes,
    private readonly ownsDatabase = true,
  ) {}

  /** Another connection (other session settings) to the same database; closing it leaves the database. */
  static async sharing(other: CodecServer, params: Record<string, string>): Promise<CodecServer> {
    const { db } = other;
    const pg = await RawPg.connect({ host: db.host, port: db.port, user: db.user, database: db.database, params });
    return new CodecServer(db, pg, other.types, false);
  }

  static async open(prefix: string, params: Record<string, string> = {}): Promise<CodecServer> {
    const db = freshDatabase(prefix);
    try {
      const pg = await RawPg.connect({ host: db.host, port: db.port, user: db.user, database: db.database, params });
      return new CodecServer(db, pg, new PgTypes());
    } catch (e) {
      db.drop();
      throw e;
    }
  }

  /** Row 0 of `sql`, every column decoded by our codecs from the server's bytes in `format`. */
  async row(sql: string, params: (string | Buffer | null)[] = [], format: 0 | 1 = 0, paramTypes: number[] = []): Promise<unknown[]> {
    const r = await this.pg.query(sql, params, format, paramTypes);
    const row = r.rows[0];
    if (row === undefined) throw new Error(`no row from ${sql}`);
    return r.fields.map((f, k) => {
      if (f.format !== format) throw new Error(`column ${f.name} came back in format ${f.format}`);
      const cell = row[k];
      return cell === null || cell === undefined ? null : this.types.decoder(f.oid, format)(cell.buf, cell.start, cell.end);
    });
  }

  /** Column 0 of row 0, decoded. */
  async value(sql: string, params: (string | Buffer | null)[] = [], format: 0 | 1 = 0, paramTypes: number[] = []): Promise<unknown> {
    return (await this.row(sql, params, format, paramTypes))[0];
  }

  /** The server's own text rendering of row 0 (no codec involved): the independent oracle. */
  async serverText(sql: string, params: (string | Buffer | null)[] = [], paramTypes: number[] = []): Promise<(string | null)[]> {
    const r = await this.pg.query(sql, params, 0, paramTypes);
    return (r.rows[0] ?? []).map((c) => (c === null ? null : c.buf.toString('utf8', c.start, c.end)));
  }

  /**
   * `select $1::type` with `value` encoded by the codec of `oid` in text and in binary, each read back in
   * text and in binary: four decoded values, pipelined on the one connection.
   */
  async roundTrips(type: string, oid: number, value: unknown): Promise<unknown[]> {
    const codec = this.types.get(oid);
    if (codec?.encodeBinary === undefined) throw new Error(`no binary encoder for ${type}`);
    const asText = codec.encodeText(value);
    const asBinary = codec.encodeBinary(value);
    return Promise.all([
      this.value(`select $1::${type}`, [asText], 0),
      this.value(`select $1::${type}`, [asText], 1),
      this.value(`select $1::${type}`, [asBinary], 0),
      this.value(`select $1::${type}`, [asBinary], 1),
    ]);
  }

  async close(): Promise<void> {
    try {
      await this.pg.close();
    } finally {
      if (this.ownsDatabase) this.db.drop();
    }
  }
}

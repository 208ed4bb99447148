/**
 * The handle of one Postgres connection: what callers (and the pool) hold. Every method is a call
 * to the connection actor; the handle adds what belongs to the caller's side: argument checks,
 * the caller's stack on errors, abort wiring, and the count of its statements in flight (which the
 * pool reads to spread pipelined work).
 */
import { CalleeExited, CallTimeout, MailboxFull, type ActorRuntime, type ExitReason, type Ref } from '../../actors/index.js';
import { GenServer, type ServerRef } from '../../behaviours/index.js';
import { remainingMs, type DataContext } from '../context.js';
import { DEFAULT_MAX_ROWS, MAX_PARAMETERS, type PreparedStatement, type QueryOptions, type StreamOptions } from '../database.js';
import type { DriverConnection } from '../driver.js';
import { ConnectFailed, ConnectionLost, DbError, InvalidDataConfig, OutcomeUnknown, QueueFull, StatementTimeout, TooManyParameters, type RedactedConnection } from '../errors.js';
import type { Result, Row, Value } from '../values.js';
import { isReadOnlySql } from './classify.js';
import { resolvePgConfig, type PgConfig, type ResolvedPgConfig } from './config.js';
import { PgConnectionServer } from './connection.js';
import { CopyInStream, CopyOutStream } from './copy-streams.js';
import { cursorRows, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE } from './cursor.js';
import { checkChannel, MAX_CHANNELS, Notifications, quoteIdentifier, type NotificationHandler } from './notifications.js';
import {
  AbortRequest,
  AwaitReady,
  CancelCurrent,
  CloseRequest,
  CopyInFail,
  CursorClose,
  CursorOpen,
  PrepareRequest,
  QueryRequest,
  StatsRequest,
  UnprepareRequest,
  type PgConnectionStats,
  type ReadyInfo,
} from './requests.js';

/** The actor answers timeouts itself; the call's own timeout only guards against a stuck actor. */
const CALL_GRACE_MS = 10_000;
/** maxRows a caller may ask for; beyond, read with stream(). */
export const MAX_ROWS_CAP = 1_000_000;
const NO_VALUES: readonly Value[] = Object.freeze([]);

export class PgConnection implements DriverConnection {
  readonly backend = 'postgres' as const;
  /** Settles when the actor exits, with its exit reason: 'normal' after close(), `{ shutdown: DbError }` when lost. */
  readonly ended: Promise<ExitReason>;
  /** The server process serving this connection (pg_backend_pid()). */
  readonly backendPid: number;
  /** What the server reported at startup (server_version, TimeZone, ...). */
  readonly serverParams: Readonly<Record<string, string>>;
  #open = true;
  #inFlight = 0;
  readonly #cap: number;
  readonly #config: ResolvedPgConfig;

  constructor(
    readonly system: ActorRuntime,
    readonly ref: ServerRef<PgConnectionServer>,
    config: ResolvedPgConfig,
    info: ReadyInfo,
    private readonly notifications: Notifications,
  ) {
    this.#config = config;
    this.backendPid = info.processId;
    this.serverParams = Object.freeze({ ...info.serverParams });
    this.#cap = config.maxInFlight + config.maxQueued;
    this.ended = system.exited(ref).then((reason) => {
      this.#open = false;
      return reason;
    });
  }

  /** Statements this handle has sent and not yet had answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  get open(): boolean {
    return this.#open;
  }

  /** Which server, for logs: never the password. */
  get connection(): RedactedConnection {
    return this.#config.redacted;
  }

  async query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    const values = params ?? NO_VALUES;
    if (values.length > MAX_PARAMETERS) throw new TooManyParameters(values.length, MAX_PARAMETERS, { connection: this.#config.redacted });
    const timeoutMs = remainingMs(ctx);
    const oneOff = options?.prepare === false;
    const request = new QueryRequest(sql, values, maxRowsOf(options), timeoutMs, ctx?.debug === true, values.length > 0 || oneOff, oneOff, options?.readOnly);
    return (await this.#call(request, request, timeoutMs, ctx)) as Result<R>;
  }

  /** Prepares now (a syntax error shows here); the statement then runs Bind + Execute only, until closed or evicted. */
  async prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    const timeoutMs = remainingMs(ctx);
    const request = new PrepareRequest(sql, timeoutMs);
    await this.#call(request, request, timeoutMs, ctx);
    return {
      sql,
      query: async (params?: readonly Value[], queryCtx?: DataContext, options?: QueryOptions): Promise<Result<R>> => {
        const values = params ?? NO_VALUES;
        if (values.length > MAX_PARAMETERS) throw new TooManyParameters(values.length, MAX_PARAMETERS, { connection: this.#config.redacted });
        const ms = remainingMs(queryCtx);
        const q = new QueryRequest(sql, values, maxRowsOf(options), ms, queryCtx?.debug === true, true, false, options?.readOnly);
        return (await this.#call(q, q, ms, queryCtx)) as Result<R>;
      },
      close: async (): Promise<void> => {
        if (!this.#open) return;
        const close = new UnprepareRequest(sql);
        await this.#call(close, close, 30_000, undefined);
      },
    };
  }

  /**
   * Rows of a large result, fetched `batchSize` (default 1,000) at a time through a portal; the
   * connection runs nothing else until the loop ends (breaking out closes the cursor). Each batch
   * gets the context's remaining time.
   */
  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R> {
    return this.#stream<R>(sql, params ?? NO_VALUES, ctx, options?.batchSize ?? DEFAULT_BATCH_SIZE);
  }

  async *#stream<R>(sql: string, values: readonly Value[], ctx: DataContext | undefined, batchSize: number): AsyncGenerator<R, void, undefined> {
    if (values.length > MAX_PARAMETERS) throw new TooManyParameters(values.length, MAX_PARAMETERS, { connection: this.#config.redacted });
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
      throw new InvalidDataConfig('batchSize', `must be an integer in 1..${MAX_BATCH_SIZE}, got ${String(batchSize)}`);
    }
    const open = new CursorOpen(sql, values, batchSize, remainingMs(ctx), ctx?.debug === true);
    // Closing must go through even when the context's signal is what ended the loop.
    const call = (request: object, identity: object, ms: number): Promise<unknown> => this.#call(request, identity, ms, request instanceof CursorClose ? undefined : ctx);
    yield* cursorRows<R>(call, open, () => remainingMs(ctx));
  }

  async ping(ctx?: DataContext): Promise<void> {
    await this.query('', undefined, ctx);
  }

  /**
   * LISTEN on `channel` (quoted: its exact spelling, never parsed as SQL); `handler` gets each
   * notification's payload. Resolves with the function that removes the handler (and UNLISTENs
   * when it was the channel's last). Handlers run inside the connection actor, between its
   * messages: keep them short (hand work to another actor); one that throws is logged and skipped.
   */
  async listen(channel: string, handler: NotificationHandler, ctx?: DataContext): Promise<() => Promise<void>> {
    checkChannel(channel);
    if (typeof handler !== 'function') throw new InvalidDataConfig('handler', 'must be a function');
    if (this.notifications.size >= MAX_CHANNELS && !this.notifications.channels.includes(channel)) {
      throw new QueueFull('pg.maxChannels', MAX_CHANNELS, { connection: this.#config.redacted });
    }
    if (this.notifications.add(channel, handler)) {
      try {
        await this.query(`LISTEN ${quoteIdentifier(channel)}`, undefined, ctx);
      } catch (error) {
        this.notifications.remove(channel, handler);
        throw error;
      }
    }
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      if (this.notifications.remove(channel, handler) && this.#open) await this.query(`UNLISTEN ${quoteIdentifier(channel)}`);
    };
  }

  /** Channels listened on: with `handlersOf`, what a pool re-issues on a new connection. */
  get channels(): string[] {
    return this.notifications.channels;
  }

  handlersOf(channel: string): NotificationHandler[] {
    return this.notifications.handlersOf(channel);
  }

  /** COPY ... FROM STDIN as a Writable; `pipeline(source, copy)` resolves when the server has the rows. */
  copyFrom(sql: string, ctx?: DataContext): CopyInStream {
    // CopyFail must reach the server even when the context's signal is why the stream was destroyed.
    return new CopyInStream((request, identity, ms) => this.#call(request, identity, ms, request instanceof CopyInFail ? undefined : ctx), sql, remainingMs(ctx));
  }

  /** COPY ... TO STDOUT as a Readable of Buffers; destroying it early cancels the COPY. */
  copyTo(sql: string, ctx?: DataContext): CopyOutStream {
    return new CopyOutStream(
      (request, identity, ms) => this.#call(request, identity, ms, ctx),
      (identity) => this.system.send(this.ref, new AbortRequest(identity, 'the COPY stream was destroyed')),
      sql,
      remainingMs(ctx),
    );
  }

  /** The actor's counters: statements in the pipeline and queued, cache size, transaction status. */
  async stats(): Promise<PgConnectionStats> {
    return (await this.system.call(this.ref, new StatsRequest(), CALL_GRACE_MS)) as PgConnectionStats;
  }

  /** Sends a CancelRequest for whatever the backend is running now. */
  async cancel(): Promise<void> {
    if (!this.#open) return;
    const request = new CancelCurrent();
    await this.#call(request, request, 30_000, undefined);
  }

  /** Terminate, then the socket closes and the actor exits normally. Statements in flight are answered first. */
  async close(): Promise<void> {
    if (this.#open) {
      this.#open = false;
      try {
        await this.system.call(this.ref, new CloseRequest(), CALL_GRACE_MS);
      } catch {
        // Already gone: `ended` settles all the same.
      }
    }
    await this.ended;
  }

  async #call(request: object, identity: object, timeoutMs: number, ctx: DataContext | undefined): Promise<unknown> {
    if (this.#inFlight >= this.#cap) throw new QueueFull('pg.maxQueued', this.#config.maxQueued, { connection: this.#config.redacted });
    if (timeoutMs <= 0) throw new StatementTimeout(0, { connection: this.#config.redacted });
    const signal = ctx?.signal;
    if (signal?.aborted) throw aborted(signal.reason, this.#config.redacted);
    // In debug, the synchronous stack at the call; otherwise the async stack at the failure (free on success).
    const site = ctx?.debug === true ? captureSite() : undefined;
    let onAbort: (() => void) | undefined;
    if (signal !== undefined) {
      onAbort = () => this.system.send(this.ref, new AbortRequest(identity, signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
    }
    this.#inFlight++;
    let reply: unknown;
    try {
      reply = await this.system.call(this.ref, request, timeoutMs + CALL_GRACE_MS);
    } catch (error) {
      throw stamp(this.#callFailed(error, request, timeoutMs), site);
    } finally {
      this.#inFlight--;
      if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
    }
    if (reply instanceof DbError) throw stamp(reply, site);
    return reply;
  }

  #callFailed(error: unknown, request: object, timeoutMs: number): DbError {
    const connection = this.#config.redacted;
    if (error instanceof DbError) return error;
    if (error instanceof CallTimeout) return new StatementTimeout(timeoutMs, { connection, cause: error });
    if (error instanceof MailboxFull) return new QueueFull('pg.maxQueued', this.#config.maxQueued, { connection, cause: error });
    if (error instanceof CalleeExited) {
      // The actor died with the statement in its hands: only a read is safe to repeat.
      const { sql, readOnly } = request as { sql?: unknown; readOnly?: boolean };
      const read = readOnly ?? (typeof sql === 'string' && isReadOnlySql(sql));
      return read ? new ConnectionLost('the connection actor exited', { connection, cause: error }) : new OutcomeUnknown('the connection actor exited', { connection, cause: error });
    }
    return new ConnectionLost('the connection actor is gone', { connection, cause: error });
  }
}

function maxRowsOf(options: QueryOptions | undefined): number {
  const maxRows = options?.maxRows ?? DEFAULT_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 0 || maxRows > MAX_ROWS_CAP) {
    throw new InvalidDataConfig('maxRows', `must be an integer in 0..${MAX_ROWS_CAP} (use stream() beyond), got ${String(maxRows)}`);
  }
  return maxRows;
}

function aborted(reason: unknown, connection: RedactedConnection): DbError {
  return new DbError('statement cancelled: the context was aborted', { sqlstate: '57014', connection, cause: reason });
}

interface Site {
  stack?: string;
}

function captureSite(): Site {
  const site: Site = {};
  Error.captureStackTrace(site, captureSite);
  return site;
}

/** Sets `callerStack`: the caller's frames, without the driver's own. */
function stamp(error: DbError, site: Site | undefined): DbError {
  const holder = site ?? {};
  if (site === undefined) Error.captureStackTrace(holder, stamp);
  const lines = (holder.stack ?? '').split('\n');
  const frames = lines.slice(1).filter((line) => !line.includes('/src/data/pg/client.') && !line.includes('(node:internal/'));
  error.callerStack = ['DbError caller:', ...frames].join('\n');
  return error;
}

export interface ConnectOptions {
  /** Links the connection actor to this one at spawn (a supervisor starting it as its child). */
  readonly link?: Ref;
}

/**
 * Opens one connection: TCP (or the Unix socket when `host` is a directory), TLS when asked,
 * startup, authentication, then custom types. Rejects with ConnectFailed, AuthFailed,
 * AuthMethodRefused or ProtocolError, each naming the server but never the password.
 */
export async function connectPostgres(system: ActorRuntime, config: PgConfig, ctx?: DataContext, options: ConnectOptions = {}): Promise<PgConnection> {
  try {
    return await connect(system, config, ctx, options);
  } catch (error) {
    throw error instanceof DbError ? stamp(error, undefined) : error;
  }
}

async function connect(system: ActorRuntime, config: PgConfig, ctx: DataContext | undefined, options: ConnectOptions): Promise<PgConnection> {
  const resolved = resolvePgConfig(config);
  let password: string | undefined;
  try {
    password = typeof config.password === 'function' ? await config.password() : config.password;
  } catch (error) {
    throw new ConnectFailed('the password function failed', { connection: resolved.redacted, cause: error });
  }
  if (password !== undefined && typeof password !== 'string') throw new InvalidDataConfig('pg.password', 'the password function must return a string');
  const connectTimeoutMs = Math.max(1, Math.min(resolved.connectTimeoutMs, remainingMs(ctx)));
  const signal = ctx?.signal;
  if (signal?.aborted) throw aborted(signal.reason, resolved.redacted);
  const notifications = new Notifications();
  const capacity = resolved.maxInFlight + resolved.maxQueued + 16_384;
  let ref: ServerRef<PgConnectionServer>;
  try {
    ref = await GenServer.start(system, () => new PgConnectionServer({ config: resolved, password, notifications, connectTimeoutMs }), { mailbox: { capacity }, link: options.link });
  } catch (error) {
    throw new ConnectFailed(error instanceof Error ? error.message : String(error), { connection: resolved.redacted, cause: error });
  }
  const onAbort = (): void => system.exit(ref, 'kill');
  signal?.addEventListener('abort', onAbort, { once: true });
  let info: unknown;
  try {
    info = await system.call(ref, new AwaitReady(), connectTimeoutMs + CALL_GRACE_MS);
  } catch (error) {
    system.exit(ref, 'kill');
    if (signal?.aborted) throw aborted(signal.reason, resolved.redacted);
    throw new ConnectFailed(error instanceof Error ? error.message : String(error), { connection: resolved.redacted, cause: error });
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (info instanceof DbError) {
    await system.exited(ref);
    throw info;
  }
  return new PgConnection(system, ref, resolved, info as ReadyInfo, notifications);
}

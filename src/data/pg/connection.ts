/**
 * One Postgres connection = one actor owning one socket. Socket events arrive as messages; every
 * statement is a `call` whose handler writes the protocol messages and returns NO_REPLY, and the
 * reply is sent once the server's answer has been read. So many statements are in flight on one
 * socket (pipelining), and no state is touched outside the actor's handlers. Writes made while
 * handling a burst of calls leave as one buffer when the burst is over: the first write of a burst
 * sends the actor a FLUSH message, which queues behind the calls already in its mailbox.
 *
 * This file is the actor's shell: the socket (TCP or Unix, TLS upgrade), startup, the calls'
 * dispatch, the write buffer, closing and loss. Statements become ops and are written in
 * statements.ts, their answers read in responses.ts, the queues kept in pipeline.ts, deadlines and
 * cancel requests in deadlines.ts, the extended protocol written in writer.ts, cursors in
 * cursor.ts, COPY in copy.ts, authentication in startup.ts.
 */
import type { Socket } from 'node:net';
import type { DatabaseError } from 'pg-protocol/dist/messages.js';
import { serialize } from 'pg-protocol';
import { shutdownWith, type TimerEntry } from '../../actors/index.js';
import { GenServer, NO_REPLY, type From } from '../../behaviours/index.js';
import type { Logger } from '../../telemetry/index.js';
import { ConnectFailed, ConnectionLost, DbError, ProtocolError } from '../errors.js';
import type { BackendKey } from './cancel.js';
import type { ResolvedPgConfig } from './config.js';
import { CopySession } from './copy.js';
import { CursorSession } from './cursor.js';
import { Deadlines, type DeadlineHost } from './deadlines.js';
import { Framer, MessageParser, Msg, type FrameSink } from './frames.js';
import { failAll, lossError } from './loss.js';
import { pgMetrics } from './metrics.js';
import type { Notifications } from './notifications.js';
import type { Op, Replier } from './ops.js';
import { Pipeline } from './pipeline.js';
import {
  AbortRequest,
  AwaitReady,
  CancelCurrent,
  CloseRequest,
  CopyInData,
  CopyInEnd,
  CopyInFail,
  CopyInStart,
  CopyOutRead,
  CopyOutStart,
  CursorClose,
  CursorNext,
  CursorOpen,
  PrepareRequest,
  QueryRequest,
  StatsRequest,
  UnprepareRequest,
  type ReadyInfo,
} from './requests.js';
import { ReadyWaiters } from './ready-waiters.js';
import { Responses, type ResponseHost } from './responses.js';
import { attachSocket, openSocket, SocketClosed, SocketData, SocketDrain, SocketError, upgradeToTls, type SocketEvent } from './socket.js';
import { Handshake } from './startup.js';
import { StatementCache } from './statement-cache.js';
import { Statements, type StatementHost } from './statements.js';

const State = { Ssl: 0, Startup: 1, Types: 2, Ready: 3, Closing: 4, Closed: 5 } as const;
type State = (typeof State)[keyof typeof State];

/** How long a closing connection waits for the server to hang up before destroying the socket. */
const CLOSE_TIMEOUT_MS = 5_000;

const FLUSH = Symbol('pg.flush');
const TICK = Symbol('pg.tick');
const CONNECT_TIMEOUT = Symbol('pg.connect-timeout');
const CLOSE_TIMEOUT = Symbol('pg.close-timeout');
const CANCEL_SETTLED = Symbol('pg.cancel-settled');

/** Slow startup work (the SCRAM key derivation) settled: the message to send, or why it failed. */
class HandshakeStep {
  constructor(readonly outcome: Buffer | DbError) {}
}

type Info = SocketEvent | AbortRequest | HandshakeStep | typeof FLUSH | typeof TICK | typeof CONNECT_TIMEOUT | typeof CLOSE_TIMEOUT | typeof CANCEL_SETTLED;

export interface ConnectionArgs {
  readonly config: ResolvedPgConfig;
  readonly password: string | undefined;
  readonly notifications: Notifications;
  /** Startup deadline (the smaller of connectTimeoutMs and the context's). */
  readonly connectTimeoutMs: number;
}

export class PgConnectionServer extends GenServer<object, unknown, never, Info> implements FrameSink, ResponseHost, DeadlineHost, StatementHost {
  readonly config: ResolvedPgConfig;
  readonly pipeline: Pipeline;
  readonly cache: StatementCache;
  /** Open cursors and COPYs, by the request that opened them. */
  readonly sessions = new Map<object, Op>();
  txStatus = 'I';
  fatal: DatabaseError | null = null;
  #state: State = State.Startup;
  #socket: Socket | null = null;
  readonly #framer = new Framer();
  readonly #parser = new MessageParser();
  readonly #handshake: Handshake;
  readonly #responses: Responses;
  readonly #deadlines: Deadlines;
  readonly #statements: Statements;
  #out: Buffer[] = [];
  #outBytes = 0;
  #flushQueued = false;
  readonly #readyWaiters = new ReadyWaiters();
  #closeWaiters: Replier[] = [];
  #connectTimer: TimerEntry | null = null;
  readonly #connectTimeoutMs: number;
  readonly #notifications: Notifications;

  constructor(args: ConnectionArgs) {
    super();
    const config = (this.config = args.config);
    this.#connectTimeoutMs = args.connectTimeoutMs;
    this.pipeline = new Pipeline(config.maxInFlight, config.maxQueued);
    this.cache = new StatementCache(config.statementCacheSize);
    const metrics = pgMetrics(config.metrics);
    this.#handshake = new Handshake(
      config,
      args.password,
      (message) => this.write(message),
      (work) => {
        const self = this.ctx.self;
        const system = this.ctx.system;
        work.then(
          (message) => system.send(self, new HandshakeStep(message)),
          (error: unknown) => system.send(self, new HandshakeStep(this.#handshake.redacted(error))),
        );
      },
    );
    this.#responses = new Responses(this, this.#parser, args.notifications, metrics);
    this.#deadlines = new Deadlines(this);
    this.#statements = new Statements(this, this.#deadlines, metrics !== undefined);
    this.#notifications = args.notifications;
  }

  get log(): Logger {
    return this.ctx.log;
  }

  get serverParams(): Record<string, string> {
    return this.#handshake.serverParams;
  }

  get backendKey(): BackendKey | null {
    return this.#handshake.key;
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  override init(): void {
    const config = this.config;
    const socket = openSocket(config);
    this.#attach(socket);
    this.#notifications.log = this.ctx.log;
    // However the actor exits (even killed, when terminate does not run), the socket goes with it.
    this.ctx.signal.addEventListener('abort', () => this.#socket?.destroy(), { once: true });
    this.#connectTimer = this.ctx.sendAfter(this.#connectTimeoutMs, CONNECT_TIMEOUT);
    if (config.ssl !== false && config.socketPath === undefined) {
      this.#state = State.Ssl;
      socket.write(serialize.requestSsl());
    } else {
      this.#state = State.Startup;
      socket.write(this.#handshake.startupMessage());
    }
  }

  override terminate(): void {
    this.#socket?.destroy();
  }

  #attach(socket: Socket): void {
    this.#socket = socket;
    attachSocket(socket, this.ctx.system, this.ctx.self);
  }

  // ---- calls -------------------------------------------------------------------------------

  override handleCall(request: object, from: From<unknown>): unknown {
    const now = Date.now();
    const statements = this.#statements;
    if (request instanceof QueryRequest) return this.#state === State.Ready ? statements.query(request, from, now) : this.#notReady();
    if (request instanceof CursorNext) return CursorSession.next(this, request, from, now);
    if (request instanceof CopyInData) return CopySession.data(this, request, from);
    if (request instanceof CopyOutRead) return CopySession.read(this, request, from);
    if (request instanceof AwaitReady) return this.#readyWaiters.await(from, this.#state === State.Ready ? this.#readyInfo() : undefined);
    if (request instanceof StatsRequest) return statements.stats();
    if (this.#state !== State.Ready) return this.#notReady();
    if (request instanceof PrepareRequest) return statements.prepare(request, from, now);
    if (request instanceof UnprepareRequest) return statements.unprepare(request, from, now);
    if (request instanceof CursorOpen) return statements.openCursor(request, from, now);
    if (request instanceof CursorClose) return CursorSession.close(this, request, from);
    if (request instanceof CopyInStart || request instanceof CopyOutStart) return statements.startCopy(request, from, now);
    if (request instanceof CopyInEnd || request instanceof CopyInFail) return CopySession.end(this, request, from);
    if (request instanceof CancelCurrent) return statements.cancel(from);
    if (request instanceof CloseRequest) return this.#close(from);
    throw new TypeError(`unknown request ${String((request as object).constructor?.name)}`);
  }

  #notReady(): DbError {
    if (this.#state >= State.Closing) return new ConnectionLost('the connection is closed', { connection: this.config.redacted });
    return new ConnectFailed('the connection is still starting', { connection: this.config.redacted });
  }

  // ---- infos -------------------------------------------------------------------------------

  override handleInfo(message: Info): void {
    if (message instanceof SocketData) {
      if (message.socket !== this.#socket) return;
      if (this.#state === State.Ssl) return this.#sslAnswer(message.chunk);
      try {
        this.#framer.push(message.chunk, this);
      } catch (error) {
        this.#lose(error instanceof DbError ? error : new ProtocolError(String((error as Error)?.message ?? error), { cause: error }));
      }
      return;
    }
    if (message instanceof HandshakeStep) {
      if (this.#state !== State.Startup) return;
      if (message.outcome instanceof DbError) return this.#lose(message.outcome);
      return this.write(message.outcome);
    }
    if (message === FLUSH) return this.#flush();
    if (message === TICK) return this.#deadlines.tick(Date.now());
    if (message === CANCEL_SETTLED) {
      this.pipeline.cancelling = false;
      return this.afterDone();
    }
    if (message instanceof AbortRequest) return this.#deadlines.abort(message.request, message.reason);
    if (message instanceof SocketDrain) {
      if (message.socket === this.#socket) CopySession.drained(this);
      return;
    }
    if (message instanceof SocketError || message instanceof SocketClosed) {
      if (message.socket !== this.#socket) return;
      if (this.#state >= State.Closing) return this.#closed();
      return this.#lose(message instanceof SocketError ? message.error : undefined);
    }
    if (message === CONNECT_TIMEOUT) {
      this.#connectTimer = null;
      if (this.#state < State.Ready) this.#lose(new ConnectFailed(`no ReadyForQuery within ${this.#connectTimeoutMs} ms (connectTimeoutMs)`));
      return;
    }
    if (message === CLOSE_TIMEOUT) {
      this.#socket?.destroy();
      return this.#closed();
    }
  }

  #sslAnswer(chunk: Buffer): void {
    const socket = this.#socket!;
    // More than the one answer byte before the handshake would be read as if it came over TLS (CVE-2021-23222).
    if (chunk.length !== 1 || (chunk[0] !== 0x53 && chunk[0] !== 0x4e)) return this.#lose(new ProtocolError('unexpected answer to SSLRequest'));
    // The server has no TLS: every retry gets the same answer, so this is the configuration's error, not an outage.
    if (chunk[0] === 0x4e) {
      const detail = 'the server refused SSL (it has no TLS), and ssl is required (pg.ssl, url sslmode=require/verify-*); not retried';
      return this.#lose(new ConnectFailed(detail, { connection: this.config.redacted }, false));
    }
    const tls = upgradeToTls(socket, this.config);
    this.#attach(tls);
    this.#state = State.Startup;
    tls.write(this.#handshake.startupMessage());
  }

  // ---- the read path ---------------------------------------------------------------------------

  frame(type: number, buf: Buffer, start: number, end: number): void {
    if (this.#state > State.Startup) return this.#responses.frame(type, buf, start, end);
    if (type === Msg.NotificationResponse) return;
    if (this.#handshake.handle(type, buf, start, end, this.#parser)) this.#started();
  }

  oversized(type: number, bytes: number): void {
    if (this.#state <= State.Startup) throw new ProtocolError(`a ${bytes}-byte message during startup`);
    this.#responses.oversized(type, bytes);
  }

  /** The first ReadyForQuery: resolve custom types if any are registered, then serve. */
  #started(): void {
    if (this.#connectTimer !== null) {
      this.ctx.cancelTimer(this.#connectTimer);
      this.#connectTimer = null;
    }
    const pending = this.config.types.pendingNames();
    if (pending.length === 0) return this.#ready();
    this.#state = State.Types;
    this.#statements.resolveTypes(pending, this.#connectTimeoutMs, (error) => (error === undefined ? this.#ready() : this.#lose(error)));
  }

  #ready(): void {
    this.#state = State.Ready;
    this.ctx.log.debug({ event: 'pg.connected', connection: this.config.redacted, pid: this.#handshake.key?.processId }, 'connected');
    this.#readyWaiters.ready(this.#readyInfo());
  }

  #readyInfo(): ReadyInfo {
    return { processId: this.#handshake.key?.processId ?? 0, serverParams: { ...this.#handshake.serverParams } };
  }

  // ---- the write path -------------------------------------------------------------------------

  /** ResponseHost: an op left the pipeline; its successor may need a cancel, and queued ops may go. */
  afterDone(): void {
    this.#statements.afterDone();
  }

  /** Queues bytes for the next flush (one socket write per burst of calls). */
  write(message: Buffer): void {
    this.#out.push(message);
    this.#outBytes += message.length;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      this.ctx.send(this.ctx.self, FLUSH);
    }
  }

  #flush(): void {
    this.#flushQueued = false;
    if (this.#outBytes === 0) return;
    const out = this.#out;
    const data = out.length === 1 ? out[0]! : Buffer.concat(out, this.#outBytes);
    this.#out = [];
    this.#outBytes = 0;
    this.#socket?.write(data);
  }

  /** Writes now, outside the burst (COPY data, whose caller waits for the socket); false when the socket is full. */
  writeNow(message: Buffer): boolean {
    this.write(message);
    this.#flush();
    return this.#socket !== null && !this.#socket.writableNeedDrain;
  }

  pauseReading(paused: boolean): void {
    if (paused) this.#socket?.pause();
    else this.#socket?.resume();
  }

  arm(deadline: number): void {
    this.#deadlines.arm(deadline);
  }

  schedule(delayMs: number): TimerEntry {
    return this.ctx.sendAfter(delayMs, TICK);
  }

  unschedule(timer: TimerEntry): void {
    this.ctx.cancelTimer(timer);
  }

  cancelSettled(): void {
    this.ctx.send(this.ctx.self, CANCEL_SETTLED);
  }

  // ---- closing and loss ------------------------------------------------------------------------

  #close(from: Replier): unknown {
    this.#closeWaiters.push(from);
    if (this.#state === State.Closing) return NO_REPLY;
    this.#state = State.Closing;
    // Statements not yet written never will be; those in flight are answered before the server hangs up.
    for (const op of this.pipeline.waiting.drain()) {
      this.sessions.delete(op.request);
      op.answer(new ConnectionLost('the connection was closed before the statement was sent', { connection: this.config.redacted }));
    }
    this.write(serialize.end());
    this.#flush();
    this.#socket?.end();
    this.ctx.sendAfter(CLOSE_TIMEOUT_MS, CLOSE_TIMEOUT);
    return NO_REPLY;
  }

  #closed(): void {
    if (this.#state === State.Closed) return;
    this.#state = State.Closed;
    this.#socket?.destroy();
    failAll(this, lossError(this, undefined, 'the connection was closed'));
    for (const waiter of this.#closeWaiters) waiter.reply(undefined);
    this.stop('normal');
  }

  /** The socket failed, the server hung up or sent garbage: every caller is answered, then the actor exits. */
  #lose(cause?: unknown): void {
    if (this.#state === State.Closed) return;
    if (cause instanceof DbError && cause.connection === undefined) Object.assign(cause, { connection: this.config.redacted });
    const starting = this.#state < State.Ready;
    this.#state = State.Closed;
    this.#socket?.destroy();
    this.#framer.reset();
    const error = lossError(this, cause, undefined, this.fatal);
    if (starting) {
      const failure = cause instanceof DbError ? cause : new ConnectFailed(error.message.replace(/^connection lost: /, ''), { connection: this.config.redacted, cause });
      if (failure.code === 'DB_AUTH_FAILED') this.ctx.log.warn({ event: 'pg.auth_failed', connection: this.config.redacted, sqlstate: failure.sqlstate }, failure.message);
      this.#readyWaiters.failed(failure);
      this.stop(shutdownWith(failure));
      return;
    }
    const protocol = cause instanceof ProtocolError ? cause : undefined;
    this.ctx.log[protocol === undefined ? 'info' : 'warn']({ event: protocol === undefined ? 'pg.connection_lost' : 'pg.protocol_error', connection: this.config.redacted, reason: error.message }, 'connection lost');
    failAll(this, error, protocol);
    for (const waiter of this.#closeWaiters) waiter.reply(undefined);
    this.stop(shutdownWith(protocol ?? error));
  }
}

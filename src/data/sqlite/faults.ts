/**
 * Failures as the caller sees them: a worker's fault reply, or a request that got no reply, turned
 * into the data layer's typed errors. Built after the await that saw the failure, so the error's
 * stack (and `callerStack`) runs through the caller's own async frames.
 */
import { fileURLToPath } from 'node:url';
import { leadingKeyword, looksReadOnly } from './sql-text.js';
import { Fault, type FaultReply } from './protocol.js';
import type { TransportFailure } from './channel.js';
import type { SqliteTelemetry } from './telemetry.js';
import {
  ConnectionLost,
  DbError,
  OutcomeUnknown,
  PoolClosed,
  ReadTooLong,
  RowTooLarge,
  SqliteBusy,
  StatementTimeout,
  TooManyRows,
  type DbErrorOptions,
  type RedactedConnection,
} from '../errors.js';
import type { DataContext } from '../context.js';

/** This driver's directory, as stack frames name it (a path, or a file URL). */
const DRIVER_URL = new URL('.', import.meta.url).href;
const DRIVER_DIRECTORY = fileURLToPath(DRIVER_URL);

/** How a statement was sent, which decides what a lost reply means. */
export type StatementMode = 'autocommit' | 'transaction' | 'read';

export interface FailureSite {
  readonly sql: string;
  readonly params: readonly unknown[] | undefined;
  readonly ctx: DataContext | undefined;
  readonly mode: StatementMode;
  readonly timeoutMs: number;
  readonly role: string;
  /** A reader's refusal of a write is handed to the router (NotReadonlyRefusal) rather than the caller. */
  readonly refusable?: boolean;
}

/** A reader refused a statement that writes; the router sends it to the writer instead. Never reaches the caller. */
export class NotReadonlyRefusal extends Error {}

export class FaultMapper {
  constructor(
    readonly connection: RedactedConnection,
    readonly telemetry: SqliteTelemetry,
    readonly replyBudgetBytes: number,
  ) {}

  #options(site: FailureSite, extra: DbErrorOptions = {}): DbErrorOptions {
    // Set here when the failure surfaced inside an async chain of the caller's; a statement's own
    // failure gets it from rejectAtCaller, at the caller's await.
    const callerStack = callerStackHere();
    return site.ctx?.debug === true && site.params !== undefined
      ? { ...extra, connection: this.connection, callerStack, params: site.params }
      : { ...extra, connection: this.connection, callerStack };
  }

  fault(reply: FaultReply, site: FailureSite): Error {
    switch (reply.x) {
      case Fault.Busy:
        this.telemetry.busy(site.role, reply.n ?? 1, reply.e);
        return new SqliteBusy(reply.e, this.#options(site, { sqliteCode: reply.k }));
      case Fault.TooManyRows:
        return new TooManyRows(reply.n ?? 0, this.#options(site));
      case Fault.Timeout:
        return new StatementTimeout(site.timeoutMs, this.#options(site));
      case Fault.ReadTooLong:
        return new ReadTooLong(reply.n ?? 0, this.#options(site));
      case Fault.RowTooLarge:
        return new RowTooLarge(reply.n ?? 0, this.replyBudgetBytes, this.#options(site));
      case Fault.NotReadonly:
        if (site.refusable === true) return new NotReadonlyRefusal(reply.e);
        return new DbError('attempt to write a readonly database (a read-only transaction or cursor runs on a reader)', this.#options(site, { sqliteCode: 'SQLITE_READONLY' }));
      case Fault.Gone:
        return new ConnectionLost(reply.e, this.#options(site));
      case Fault.Sqlite:
        return new DbError(reply.e, this.#options(site, { sqliteCode: reply.k }));
      default:
        return new DbError(`${site.role}: ${reply.e}`, this.#options(site));
    }
  }

  transport(failure: TransportFailure, site: FailureSite): Error {
    const options = this.#options(site, { cause: failure.cause });
    switch (failure.kind) {
      case 'closed':
        return new PoolClosed(options);
      case 'stale':
        // Never sent: the handle it was bound to (a transaction's, a cursor's) is gone.
        return new ConnectionLost(failure.detail, options);
      case 'too_large':
        return new RowTooLarge(0, this.replyBudgetBytes, options);
      case 'timeout':
        return mayHaveWritten(site) ? new OutcomeUnknown(failure.detail, options) : new StatementTimeout(site.timeoutMs, options);
      default:
        return mayHaveWritten(site) ? new OutcomeUnknown(failure.detail, options) : new ConnectionLost(failure.detail, options);
    }
  }
}

/**
 * Whether a statement that got no reply may have changed the database. Inside a transaction only
 * COMMIT can: everything else is rolled back with the lost handle.
 */
function mayHaveWritten(site: FailureSite): boolean {
  switch (site.mode) {
    case 'read':
      return false;
    case 'transaction': {
      const keyword = leadingKeyword(site.sql);
      return keyword === 'COMMIT' || keyword === 'END';
    }
    default:
      return !looksReadOnly(site.sql);
  }
}

/**
 * The caller's frames where a failure surfaced: past an await, V8 lists the awaiting async
 * functions, which are the caller's. Undefined when no frame is the caller's (a callback).
 */
export function callerStackHere(): string | undefined {
  // The event handler that settled the statement brings Node's own frames (a message port's or a
  // broadcast channel's): never the caller's, and with the default limit of 10 they push its
  // async frames out.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = CALLER_STACK_FRAMES;
  const stack = new Error().stack;
  Error.stackTraceLimit = limit;
  if (stack === undefined) return undefined;
  // Drop the message line and the driver's own frames: the caller's are the ones of use.
  const frames = stack
    .split('\n')
    .slice(1)
    .filter((line) => !line.includes(DRIVER_DIRECTORY) && !line.includes(DRIVER_URL) && !line.includes('(node:internal/'));
  return frames.length === 0 ? undefined : frames.join('\n');
}

/** Frames captured for a caller stack: the driver's own and the event loop's, then the caller's. */
const CALLER_STACK_FRAMES = 40;

/**
 * Statements pending on one thread beyond which new ones record no caller stack: in bulk (thousands
 * issued at once), thousands of failures would each capture one.
 */
export const CALLER_STACK_PENDING_LIMIT = 1_024;

/**
 * A promise that rejects with `error` once its `callerStack` holds the caller's async frames. A
 * statement's promise is resolved with it on failure, so only a failure pays: V8 walks from this
 * function's promise through the statement's (which adopts it) to the caller's await. Two hops:
 * the adoption is itself a microtask, queued after the first.
 */
export async function rejectAtCaller(error: DbError): Promise<never> {
  await undefined;
  await undefined;
  error.callerStack ??= callerStackHere();
  throw error;
}

/**
 * `promise`, with the caller's async frames recorded in the `callerStack` of a DbError it rejects
 * with. It costs one async hop, so statements use rejectAtCaller instead; this is for the rare
 * promise made elsewhere (a write waiting for the writer's gate).
 */
export async function withCallerStack<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof DbError && error.callerStack === undefined) error.callerStack = callerStackHere();
    throw error;
  }
}

/**
 * A lost connection: every caller still waiting is answered. A statement that only read, sent
 * while no transaction could be open, fails with retryable ConnectionLost; any other statement in
 * flight may or may not have taken effect and fails with OutcomeUnknown (never retryable).
 * Statements never written fail with ConnectionLost: they certainly did nothing.
 * When the connection ended itself on a ProtocolError (the server broke the message order), the
 * statements in flight fail with that ProtocolError: no answer from that stream can be trusted.
 *
 * "Only read" is decided here, at loss time, so the hot path pays nothing: walking the in-flight
 * statements in order from the last known transaction status, the first one that is not a plain
 * read might have opened a transaction, so everything after it is in doubt too.
 */
import type { DatabaseError } from 'pg-protocol/dist/messages.js';
import { ConnectionLost, DbError, OutcomeUnknown, ProtocolError, type DbErrorOptions } from '../errors.js';
import { isReadOnlySql } from './classify.js';
import type { ResolvedPgConfig } from './config.js';
import { OpKind, type Op } from './ops.js';
import type { Pipeline } from './pipeline.js';
import { serverFields } from './server-error.js';

export interface LossHost {
  readonly config: ResolvedPgConfig;
  readonly pipeline: Pipeline;
  readonly sessions: Map<object, Op>;
  readonly txStatus: string;
}

interface Session {
  lost?(op: Op, error: DbError): void;
}

/** Why the connection is gone, as a ConnectionLost (its message and fields are reused per op). */
export function lossError(host: LossHost, cause: unknown, message?: string, fatal?: DatabaseError | null): ConnectionLost {
  let options: DbErrorOptions = { connection: host.config.redacted, cause };
  let why = message;
  if (fatal !== undefined && fatal !== null) {
    // The server said why before hanging up (57P01 admin shutdown / pg_terminate_backend, ...).
    options = { ...serverFields(fatal, host.config.redacted), cause: cause ?? fatal.message };
    why = fatal.message;
  }
  why ??= cause instanceof Error ? cause.message : cause === undefined ? 'the server closed the connection' : String(cause);
  return new ConnectionLost(why, options);
}

/** Answers every op still waiting, then leaves the queues empty; `protocol`: the order violation that ended the connection. */
export function failAll(host: LossHost, base: ConnectionLost, protocol?: ProtocolError): void {
  const message = base.message.replace(/^connection lost: /, '');
  const options = optionsOf(base);
  let maybeInTransaction = host.txStatus !== 'I';
  for (const op of host.pipeline.sent.drain()) {
    if (protocol !== undefined) {
      // One error per caller: each gets its own callerStack.
      fail(op, new ProtocolError(protocol.message.replace(/^protocol error: /, ''), { connection: protocol.connection, cause: protocol }));
      continue;
    }
    const read = !maybeInTransaction && readsOnly(op);
    if (!read && op.kind !== OpKind.Prepare && op.kind !== OpKind.Close) maybeInTransaction = true;
    fail(op, read ? new ConnectionLost(message, options) : new OutcomeUnknown(message, options));
  }
  for (const op of host.pipeline.waiting.drain()) fail(op, new ConnectionLost(`${message} (the statement was never sent)`, options));
  // Sessions whose op already finished (a COPY TO not yet fully read, a COPY FROM not yet ended).
  for (const op of host.sessions.values()) fail(op, new ConnectionLost(message, options));
  host.sessions.clear();
}

function fail(op: Op, error: DbError): void {
  (op.session as Session | null)?.lost?.(op, error);
  op.answer(error);
}

function readsOnly(op: Op): boolean {
  switch (op.kind) {
    case OpKind.Prepare:
    case OpKind.Close:
      return true;
    case OpKind.Query:
    case OpKind.Cursor:
    case OpKind.CopyOut:
      return (op.request as { readOnly?: boolean }).readOnly ?? isReadOnlySql(op.sql);
    default:
      return false;
  }
}

function optionsOf(error: DbError): DbErrorOptions {
  return {
    sqlstate: error.sqlstate,
    severity: error.severity,
    detail: error.detail,
    hint: error.hint,
    routine: error.routine,
    file: error.file,
    line: error.line,
    connection: error.connection,
    cause: error.cause,
  };
}

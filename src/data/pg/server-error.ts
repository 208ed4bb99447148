/**
 * ErrorResponse → DbError: the server's message with every field it sent (SQLSTATE, detail,
 * constraint, ...), which server it was (redacted), and the bound parameters only in debug.
 */
import type { DatabaseError } from 'pg-protocol/dist/messages.js';
import { AuthFailed, ConnectFailed, DataErrorCode, DbError, isRetryableCode, StatementTimeout, type DbErrorOptions, type RedactedConnection } from '../errors.js';

/** SQLSTATEs of a rejected login. */
const AUTH_SQLSTATES = new Set(['28P01', '28000']);

export function serverFields(error: DatabaseError, connection: RedactedConnection, params?: readonly unknown[]): DbErrorOptions {
  return {
    sqlstate: error.code,
    severity: error.severity,
    detail: error.detail,
    hint: error.hint,
    position: toNumber(error.position),
    internalPosition: toNumber(error.internalPosition),
    internalQuery: error.internalQuery,
    where: error.where,
    schema: error.schema,
    table: error.table,
    column: error.column,
    dataType: error.dataType,
    constraint: error.constraint,
    file: error.file,
    line: toNumber(error.line),
    routine: error.routine,
    connection,
    params,
  };
}

/** A statement's error as the server reported it. */
export function queryError(error: DatabaseError, connection: RedactedConnection, params?: readonly unknown[]): DbError {
  return new DbError(error.message || 'server error', serverFields(error, connection, params));
}

/**
 * A cancel meant for the statement before this one arrived after it finished and cancelled this
 * one instead: it was rolled back, so retrying is safe (outside a transaction block).
 */
export function strayCancel(error: DatabaseError, connection: RedactedConnection, params?: readonly unknown[]): DbError {
  const message = `${error.message} (a cancel request meant for the statement before it arrived late; this one was rolled back)`;
  return new DbError(message, serverFields(error, connection, params), DataErrorCode.QueryFailed, true);
}

/** The statement was cancelled because its timeout passed (the server answered 57014). */
export function timeoutError(timeoutMs: number, error: DatabaseError | undefined, connection: RedactedConnection, params?: readonly unknown[]): StatementTimeout {
  return new StatementTimeout(timeoutMs, error === undefined ? { connection, params } : serverFields(error, connection, params));
}

/** An ErrorResponse during startup: bad credentials are AuthFailed, anything else ConnectFailed. */
export function startupError(error: DatabaseError, connection: RedactedConnection): DbError {
  const fields = serverFields(error, connection);
  const where = `user ${connection.user} at ${connection.host}:${connection.port}/${connection.database}`;
  if (error.code !== undefined && AUTH_SQLSTATES.has(error.code)) return new AuthFailed(`${where}: ${error.message}`, fields);
  // By code: a server starting up or full may take us later; an unknown database will not appear by itself.
  return new ConnectFailed(`${where}: ${error.message}`, fields, error.code === undefined || isRetryableCode(fields));
}

/** FATAL and PANIC end the session: the server closes the socket after sending them. */
export function isFatal(error: DatabaseError): boolean {
  return error.severity === 'FATAL' || error.severity === 'PANIC';
}

function toNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

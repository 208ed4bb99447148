/**
 * Error registry of the admin surface (admin actor, HTTP, node lifecycle, CLI client). Every code is
 * stable: never renamed, never reused. `docs/admin.md` documents each one; a test holds the two together.
 */
import { codedError, optionError } from '../actors/coded-error.js';

export const AdminErrorCode = {
  InvalidOption: 'ADMIN_INVALID_OPTION',
  ListenFailed: 'ADMIN_LISTEN_FAILED',
  NodeStartFailed: 'ADMIN_NODE_START_FAILED',
  Unavailable: 'ADMIN_UNAVAILABLE',
  Busy: 'ADMIN_BUSY',
  SnapshotTimeout: 'ADMIN_SNAPSHOT_TIMEOUT',
  SnapshotFailed: 'ADMIN_SNAPSHOT_FAILED',
  NotFound: 'ADMIN_NOT_FOUND',
  MethodNotAllowed: 'ADMIN_METHOD_NOT_ALLOWED',
  MetricsFailed: 'ADMIN_METRICS_FAILED',
  Unreachable: 'ADMIN_UNREACHABLE',
  BadResponse: 'ADMIN_BAD_RESPONSE',
  Usage: 'ADMIN_USAGE',
  HostRefused: 'ADMIN_HOST_REFUSED',
  Unauthorized: 'ADMIN_UNAUTHORIZED',
  TokenRequired: 'ADMIN_TOKEN_REQUIRED',
  Overloaded: 'ADMIN_OVERLOADED',
  BadRequest: 'ADMIN_BAD_REQUEST',
  BodyTooLarge: 'ADMIN_BODY_TOO_LARGE',
  BodyTimeout: 'ADMIN_BODY_TIMEOUT',
  EventsFull: 'ADMIN_EVENTS_FULL',
  ActionFailed: 'ADMIN_ACTION_FAILED',
} as const;
export type AdminErrorCode = (typeof AdminErrorCode)[keyof typeof AdminErrorCode];

/** A startNode or admin option is outside its allowed range; `option` names the setting (and so the cap). */
export class AdminInvalidOption extends optionError(AdminErrorCode.InvalidOption, 'admin option') {}

/** The HTTP admin surface could not bind its address (port taken, host unknown, no permission). */
export class AdminListenFailed extends codedError(AdminErrorCode.ListenFailed, (host: string, port: number, cause: unknown) => ({
  message: `admin HTTP surface cannot listen on ${host}:${port}: ${describeCause(cause)}`,
  fields: { host, port },
  options: { cause },
})) {}

/** startNode could not start the root supervisor; `cause` is the supervisor's StartFailed. */
export class NodeStartFailed extends codedError(AdminErrorCode.NodeStartFailed, (node: string, cause: unknown) => ({
  message: `node '${node}' failed to start its root supervisor: ${describeCause(cause)}`,
  fields: { node },
  options: { cause },
})) {}

/** The admin actor is not running (or did not answer in time). */
export class AdminUnavailable extends codedError(AdminErrorCode.Unavailable, (detail: string, cause?: unknown) => ({
  message: `admin actor unavailable: ${detail}`,
  options: { cause },
})) {}

/** The admin actor already runs its cap of concurrent tree snapshots. */
export class AdminBusy extends codedError(AdminErrorCode.Busy, (maxConcurrent: number) => ({
  message: `admin actor is busy: ${maxConcurrent} snapshots are in progress (cap ${maxConcurrent})`,
  fields: { maxConcurrent },
})) {}

/** A supervisor or snapshot provider did not answer within the snapshot's time limit. */
export class SnapshotTimeout extends codedError(AdminErrorCode.SnapshotTimeout, (target: string, timeoutMs: number) => ({
  message: `${target} did not answer within ${timeoutMs} ms`,
  fields: { target, timeoutMs },
})) {}

/** A snapshot could not be taken at all (the tree walk itself failed). */
export class SnapshotFailed extends codedError(AdminErrorCode.SnapshotFailed, (detail: string, cause?: unknown) => ({
  message: `snapshot failed: ${detail}`,
  options: { cause },
})) {}

/** HTTP: no such admin endpoint. */
export class AdminNotFound extends codedError(AdminErrorCode.NotFound, (path: string) => ({
  message: `no admin endpoint ${path}`,
  fields: { path },
})) {}

/** HTTP: the endpoint does not take this method (GET everywhere but the task operations, which are POST). */
export class AdminMethodNotAllowed extends codedError(AdminErrorCode.MethodNotAllowed, (method: string, allowed: string = 'GET') => ({
  message: allowed === 'GET' ? `method ${method} not allowed; the admin surface is read-only (GET)` : `method ${method} not allowed; this endpoint takes ${allowed}`,
  fields: { method, allowed },
})) {}

/** HTTP: the metrics source threw or rejected. */
export class MetricsFailed extends codedError(AdminErrorCode.MetricsFailed, (cause: unknown) => ({
  message: `metrics source failed: ${describeCause(cause)}`,
  options: { cause },
})) {}

/** HTTP: the `Host` header names neither the bound address nor a configured name (DNS rebinding); 421. */
export class AdminHostRefused extends codedError(AdminErrorCode.HostRefused, (hostHeader: string) => ({
  message: `host ${JSON.stringify(hostHeader.slice(0, 100))} is not this admin surface's address or one of admin.allowedHosts`,
  fields: { hostHeader },
})) {}

/** HTTP: the surface has a token and the request did not carry it (`authorization: Bearer <token>`); 401. */
export class AdminUnauthorized extends codedError(AdminErrorCode.Unauthorized, () => 'missing or wrong admin token (authorization: Bearer <admin.token>)') {}

/**
 * startNode/startAdminHttp: a non-loopback bind without `token`; the surface is refused, not merely
 * logged. HTTP 403: a mutating endpoint (`operation`) on a surface with no token configured.
 */
export class AdminTokenRequired extends codedError(AdminErrorCode.TokenRequired, (host: string, operation?: string) => ({
  message:
    operation === undefined
      ? `refusing to serve the admin surface on ${host} without admin.token: only loopback binds may go without one`
      : `${operation} is refused: mutating endpoints need admin.token to be configured, and this surface has none`,
  fields: { host, operation },
})) {}

/** HTTP 400: a request body that is not JSON or not the endpoint's shape, or a bad query parameter; `field` names it. */
export class AdminBadRequest extends codedError(AdminErrorCode.BadRequest, (field: string, detail: string) => ({
  message: `bad request: ${field} ${detail}`,
  fields: { field },
})) {}

/** HTTP 413: a request body over `admin.maxBodyBytes`. */
export class AdminBodyTooLarge extends codedError(AdminErrorCode.BodyTooLarge, (limitBytes: number) => ({
  message: `request body exceeds admin.maxBodyBytes = ${limitBytes}`,
  fields: { limitBytes },
})) {}

/** HTTP 408: a request body not read whole within `admin.bodyTimeoutMs`; the connection is closed after the answer. */
export class AdminBodyTimeout extends codedError(AdminErrorCode.BodyTimeout, (timeoutMs: number) => ({
  message: `request body not received within admin.bodyTimeoutMs = ${timeoutMs} ms`,
  fields: { timeoutMs },
})) {}

/**
 * HTTP 503: `admin.maxRequests` non-probe requests are in progress, or `admin.maxWriteRequests`
 * mutating ones (`cap` names which); probes are not counted and still answer.
 */
export class AdminOverloaded extends codedError(AdminErrorCode.Overloaded, (maxRequests: number, cap: 'admin.maxRequests' | 'admin.maxWriteRequests' = 'admin.maxRequests') => ({
  message: `${maxRequests} admin ${cap === 'admin.maxRequests' ? '' : 'mutating '}requests in progress (${cap}); probes still answer`,
  fields: { maxRequests, cap },
})) {}

/** HTTP 503: `observer.maxEventConnections` pages already follow `/events`; close one (or raise the cap). */
export class AdminEventsFull extends codedError(AdminErrorCode.EventsFull, (maxConnections: number) => ({
  message: `${maxConnections} event streams are open (observer.maxEventConnections = ${maxConnections}); close a page or raise the cap`,
  fields: { maxConnections },
})) {}

/** HTTP 409: an operator action's target is not what the action needs (not a supervisor, a dynamic child to restart, no such program). */
export class AdminActionFailed extends codedError(AdminErrorCode.ActionFailed, (action: string, detail: string, cause?: unknown) => ({
  message: `${action} refused: ${detail}`,
  fields: { action },
  options: { cause },
})) {}

/** CLI: the node's admin URL did not answer (connection refused, DNS, timeout). */
export class AdminUnreachable extends codedError(AdminErrorCode.Unreachable, (url: string, cause: unknown) => ({
  message: `cannot reach the admin surface at ${url}: ${describeCause(cause)}`,
  fields: { url },
  options: { cause },
})) {}

/** CLI: the admin surface answered with something that is not what the endpoint promises. */
export class AdminBadResponse extends codedError(AdminErrorCode.BadResponse, (url: string, status: number, detail: string) => ({
  message: `unexpected answer from ${url} (HTTP ${status}): ${detail}`,
  fields: { url, status },
})) {}

/** CLI: unknown command or option. */
export class CliUsageError extends codedError(AdminErrorCode.Usage, (detail: string) => detail) {}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const nested = cause.cause instanceof Error ? ` (${describeCause(cause.cause)})` : '';
    return `${typeof code === 'string' ? `${code}: ` : ''}${cause.message}${nested}`;
  }
  return String(cause);
}

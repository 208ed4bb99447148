/**
 * Error registry of the admin surface (admin actor, HTTP, node lifecycle, CLI client). Every code is
 * stable: never renamed, never reused. `docs/admin.md` documents each one; a test holds the two together.
 */
import { MoloError } from '../actors/index.js';

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
} as const;
export type AdminErrorCode = (typeof AdminErrorCode)[keyof typeof AdminErrorCode];

/** A startNode or admin option is outside its allowed range; `option` names the setting (and so the cap). */
export class AdminInvalidOption extends MoloError {
  static readonly code = AdminErrorCode.InvalidOption;
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(AdminErrorCode.InvalidOption, `invalid admin option ${option}: ${detail}`);
  }
}

/** The HTTP admin surface could not bind its address (port taken, host unknown, no permission). */
export class AdminListenFailed extends MoloError {
  static readonly code = AdminErrorCode.ListenFailed;
  constructor(
    readonly host: string,
    readonly port: number,
    cause: unknown,
  ) {
    super(AdminErrorCode.ListenFailed, `admin HTTP surface cannot listen on ${host}:${port}: ${describeCause(cause)}`, { cause });
  }
}

/** startNode could not start the root supervisor; `cause` is the supervisor's StartFailed. */
export class NodeStartFailed extends MoloError {
  static readonly code = AdminErrorCode.NodeStartFailed;
  constructor(
    readonly node: string,
    cause: unknown,
  ) {
    super(AdminErrorCode.NodeStartFailed, `node '${node}' failed to start its root supervisor: ${describeCause(cause)}`, { cause });
  }
}

/** The admin actor is not running (or did not answer in time). */
export class AdminUnavailable extends MoloError {
  static readonly code = AdminErrorCode.Unavailable;
  constructor(detail: string, cause?: unknown) {
    super(AdminErrorCode.Unavailable, `admin actor unavailable: ${detail}`, { cause });
  }
}

/** The admin actor already runs its cap of concurrent tree snapshots. */
export class AdminBusy extends MoloError {
  static readonly code = AdminErrorCode.Busy;
  constructor(readonly maxConcurrent: number) {
    super(AdminErrorCode.Busy, `admin actor is busy: ${maxConcurrent} snapshots are in progress (cap ${maxConcurrent})`);
  }
}

/** A supervisor or snapshot provider did not answer within the snapshot's time limit. */
export class SnapshotTimeout extends MoloError {
  static readonly code = AdminErrorCode.SnapshotTimeout;
  constructor(
    readonly target: string,
    readonly timeoutMs: number,
  ) {
    super(AdminErrorCode.SnapshotTimeout, `${target} did not answer within ${timeoutMs} ms`);
  }
}

/** A snapshot could not be taken at all (the tree walk itself failed). */
export class SnapshotFailed extends MoloError {
  static readonly code = AdminErrorCode.SnapshotFailed;
  constructor(detail: string, cause?: unknown) {
    super(AdminErrorCode.SnapshotFailed, `snapshot failed: ${detail}`, { cause });
  }
}

/** HTTP: no such admin endpoint. */
export class AdminNotFound extends MoloError {
  static readonly code = AdminErrorCode.NotFound;
  constructor(readonly path: string) {
    super(AdminErrorCode.NotFound, `no admin endpoint ${path}`);
  }
}

/** HTTP: the endpoint does not take this method (GET everywhere but the task operations, which are POST). */
export class AdminMethodNotAllowed extends MoloError {
  static readonly code = AdminErrorCode.MethodNotAllowed;
  constructor(
    readonly method: string,
    readonly allowed: string = 'GET',
  ) {
    super(AdminErrorCode.MethodNotAllowed, allowed === 'GET' ? `method ${method} not allowed; the admin surface is read-only (GET)` : `method ${method} not allowed; this endpoint takes ${allowed}`);
  }
}

/** HTTP: the metrics source threw or rejected. */
export class MetricsFailed extends MoloError {
  static readonly code = AdminErrorCode.MetricsFailed;
  constructor(cause: unknown) {
    super(AdminErrorCode.MetricsFailed, `metrics source failed: ${describeCause(cause)}`, { cause });
  }
}

/** HTTP: the `Host` header names neither the bound address nor a configured name (DNS rebinding); 421. */
export class AdminHostRefused extends MoloError {
  static readonly code = AdminErrorCode.HostRefused;
  constructor(readonly hostHeader: string) {
    super(AdminErrorCode.HostRefused, `host ${JSON.stringify(hostHeader.slice(0, 100))} is not this admin surface's address or one of admin.allowedHosts`);
  }
}

/** HTTP: the surface has a token and the request did not carry it (`authorization: Bearer <token>`); 401. */
export class AdminUnauthorized extends MoloError {
  static readonly code = AdminErrorCode.Unauthorized;
  constructor() {
    super(AdminErrorCode.Unauthorized, 'missing or wrong admin token (authorization: Bearer <admin.token>)');
  }
}

/**
 * startNode/startAdminHttp: a non-loopback bind without `token`; the surface is refused, not merely
 * logged. HTTP 403: a mutating endpoint (`operation`) on a surface with no token configured.
 */
export class AdminTokenRequired extends MoloError {
  static readonly code = AdminErrorCode.TokenRequired;
  constructor(
    readonly host: string,
    readonly operation?: string,
  ) {
    super(
      AdminErrorCode.TokenRequired,
      operation === undefined
        ? `refusing to serve the admin surface on ${host} without admin.token: only loopback binds may go without one`
        : `${operation} is refused: mutating endpoints need admin.token to be configured, and this surface has none`,
    );
  }
}

/** HTTP 400: a request body that is not JSON or not the endpoint's shape, or a bad query parameter; `field` names it. */
export class AdminBadRequest extends MoloError {
  static readonly code = AdminErrorCode.BadRequest;
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(AdminErrorCode.BadRequest, `bad request: ${field} ${detail}`);
  }
}

/** HTTP 413: a request body over `admin.maxBodyBytes`. */
export class AdminBodyTooLarge extends MoloError {
  static readonly code = AdminErrorCode.BodyTooLarge;
  constructor(readonly limitBytes: number) {
    super(AdminErrorCode.BodyTooLarge, `request body exceeds admin.maxBodyBytes = ${limitBytes}`);
  }
}

/** HTTP 408: a request body not read whole within `admin.bodyTimeoutMs`; the connection is closed after the answer. */
export class AdminBodyTimeout extends MoloError {
  static readonly code = AdminErrorCode.BodyTimeout;
  constructor(readonly timeoutMs: number) {
    super(AdminErrorCode.BodyTimeout, `request body not received within admin.bodyTimeoutMs = ${timeoutMs} ms`);
  }
}

/**
 * HTTP 503: `admin.maxRequests` non-probe requests are in progress, or `admin.maxWriteRequests`
 * mutating ones (`cap` names which); probes are not counted and still answer.
 */
export class AdminOverloaded extends MoloError {
  static readonly code = AdminErrorCode.Overloaded;
  constructor(
    readonly maxRequests: number,
    readonly cap: 'admin.maxRequests' | 'admin.maxWriteRequests' = 'admin.maxRequests',
  ) {
    super(AdminErrorCode.Overloaded, `${maxRequests} admin ${cap === 'admin.maxRequests' ? '' : 'mutating '}requests in progress (${cap}); probes still answer`);
  }
}

/** CLI: the node's admin URL did not answer (connection refused, DNS, timeout). */
export class AdminUnreachable extends MoloError {
  static readonly code = AdminErrorCode.Unreachable;
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(AdminErrorCode.Unreachable, `cannot reach the admin surface at ${url}: ${describeCause(cause)}`, { cause });
  }
}

/** CLI: the admin surface answered with something that is not what the endpoint promises. */
export class AdminBadResponse extends MoloError {
  static readonly code = AdminErrorCode.BadResponse;
  constructor(
    readonly url: string,
    readonly status: number,
    detail: string,
  ) {
    super(AdminErrorCode.BadResponse, `unexpected answer from ${url} (HTTP ${status}): ${detail}`);
  }
}

/** CLI: unknown command or option. */
export class CliUsageError extends MoloError {
  static readonly code = AdminErrorCode.Usage;
  constructor(detail: string) {
    super(AdminErrorCode.Usage, detail);
  }
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const nested = cause.cause instanceof Error ? ` (${describeCause(cause.cause)})` : '';
    return `${typeof code === 'string' ? `${code}: ` : ''}${cause.message}${nested}`;
  }
  return String(cause);
}

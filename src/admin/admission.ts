/**
 * What every non-probe request passes before it is served: the token (401 without it, when one is
 * set) and the listener's caps on requests in progress (503 past them, counted while it runs):
 * `maxRequests` in all, of which mutating requests may hold only `maxWriteRequests`, so that slow
 * writes (a body trickling in until `bodyTimeoutMs`) always leave slots for reads.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdminOverloaded } from './errors.js';
import { errorBody, sendJson } from './http-response.js';
import type { RequestGuard } from './request-guard.js';

/** What a listener counts of its refusals. */
export interface AdminHttpStats {
  /** Request bodies cut at `bodyTimeoutMs` (answered 408, connection closed). */
  bodyTimeouts: number;
  /** Mutating requests refused (503) because `maxWriteRequests` were in progress. */
  writesRefused: number;
  /** Requests refused (503) because `maxRequests` were in progress. */
  overloaded: number;
}

export const emptyAdminHttpStats = (): AdminHttpStats => ({ bodyTimeouts: 0, writesRefused: 0, overloaded: 0 });

export interface AdmissionCounter {
  readonly guard: RequestGuard;
  /** Non-probe requests in progress on this listener, and the mutating ones among them. */
  inFlight: number;
  writesInFlight: number;
  readonly stats: AdminHttpStats;
}

export interface AdmissionLimits {
  readonly maxRequests: number;
  readonly maxWriteRequests: number;
}

/** Runs `serve` if the request is admitted; otherwise answers 401 or 503 itself. */
export async function serveAdmitted(listener: AdmissionCounter, limits: AdmissionLimits, request: IncomingMessage, response: ServerResponse, serve: () => Promise<void>): Promise<void> {
  try {
    listener.guard.checkToken(request);
  } catch (error) {
    response.setHeader('www-authenticate', 'Bearer');
    sendJson(response, 401, errorBody(error));
    return;
  }
  const write = request.method !== 'GET' && request.method !== 'HEAD';
  let refusal: AdminOverloaded | undefined;
  if (listener.inFlight >= limits.maxRequests) {
    listener.stats.overloaded++;
    refusal = new AdminOverloaded(limits.maxRequests);
  } else if (write && listener.writesInFlight >= limits.maxWriteRequests) {
    listener.stats.writesRefused++;
    refusal = new AdminOverloaded(limits.maxWriteRequests, 'admin.maxWriteRequests');
  }
  if (refusal !== undefined) {
    // A body left unread: the connection cannot be reused.
    if (write) response.setHeader('connection', 'close');
    sendJson(response, 503, errorBody(refusal));
    return;
  }
  listener.inFlight++;
  if (write) listener.writesInFlight++;
  try {
    await serve();
  } finally {
    listener.inFlight--;
    if (write) listener.writesInFlight--;
  }
}

/**
 * What every non-probe request passes before it is served: the token (401 without it, when one is
 * set) and the listener's cap on requests in progress (503 past it, counted while it runs).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdminOverloaded } from './errors.js';
import { errorBody, sendJson } from './http-response.js';
import type { RequestGuard } from './request-guard.js';

export interface AdmissionCounter {
  readonly guard: RequestGuard;
  /** Non-probe requests in progress on this listener. */
  inFlight: number;
}

/** Runs `serve` if the request is admitted; otherwise answers 401 or 503 itself. */
export async function serveAdmitted(listener: AdmissionCounter, maxRequests: number, request: IncomingMessage, response: ServerResponse, serve: () => Promise<void>): Promise<void> {
  try {
    listener.guard.checkToken(request);
  } catch (error) {
    response.setHeader('www-authenticate', 'Bearer');
    sendJson(response, 401, errorBody(error));
    return;
  }
  if (listener.inFlight >= maxRequests) {
    sendJson(response, 503, errorBody(new AdminOverloaded(maxRequests)));
    return;
  }
  listener.inFlight++;
  try {
    await serve();
  } finally {
    listener.inFlight--;
  }
}

/**
 * The observer's requests on the main admin listener: the page's files (no token: they hold no
 * data, and a browser cannot send a bearer token when it navigates), `/events` (token, then its
 * own connection cap), and the operator actions (token, the write cap, a configured token).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveAdmitted, type AdmissionCounter, type AdmissionLimits } from '../admission.js';
import { AdminBodyTimeout, AdminBodyTooLarge, AdminMethodNotAllowed, AdminNotFound, AdminTokenRequired } from '../errors.js';
import { errorBody, sendJson, statusFor } from '../http-response.js';
import { readJsonBody } from '../request-body.js';
import { actionBody, ACTION_ERROR_STATUS, matchAction, runAction, type ActionContext } from './actions.js';
import { observerAssets } from './assets.js';
import type { EventHub } from './events.js';
import type { Sampler } from './sampler.js';

export interface Observer {
  readonly hub: EventHub;
  readonly sampler: Sampler;
  readonly actions: ActionContext;
}

export interface ObserverRequestSettings extends AdmissionLimits {
  readonly host: string;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

/** The page may run only its own files, and may not be framed (its buttons act on the node). */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Whether `path` is the observer's; then it has been answered. */
export async function serveObserver(
  observer: Observer,
  settings: ObserverRequestSettings,
  listener: AdmissionCounter,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse,
): Promise<boolean> {
  const path = url.pathname;
  const asset = observerAssets().get(path);
  if (asset !== undefined) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuseMethod(response, request, 'GET');
    response.writeHead(200, { 'content-type': asset.type, 'content-length': asset.body.length, 'cache-control': 'no-cache', ...PAGE_HEADERS });
    response.end(request.method === 'HEAD' ? undefined : asset.body);
    return true;
  }
  if (path === '/events') {
    if (request.method !== 'GET') return refuseMethod(response, request, 'GET');
    try {
      listener.guard.checkToken(request);
    } catch (error) {
      response.setHeader('www-authenticate', 'Bearer');
      sendJson(response, 401, errorBody(error));
      return true;
    }
    observer.hub.open(request, response, observer.sampler.history.toArray(), observer.sampler.latest);
    return true;
  }
  const action = matchAction(path);
  if (action === undefined) {
    if (!path.startsWith('/actions/')) return false;
    sendJson(response, 404, errorBody(new AdminNotFound(path)));
    return true;
  }
  if (request.method !== 'POST') return refuseMethod(response, request, 'POST');
  await serveAdmitted(listener, settings, request, response, async () => {
    try {
      if (!listener.guard.hasToken) throw new AdminTokenRequired(settings.host, `POST ${path}`);
      const body = actionBody(action, await readJsonBody(request, settings.maxBodyBytes, settings.bodyTimeoutMs));
      const result = await runAction(observer.actions, action, body);
      sendJson(response, 200, result);
      // The pages see the outcome now rather than at the next tick.
      if (observer.hub.stats.open > 0) void observer.sampler.refresh();
    } catch (error) {
      if (error instanceof AdminBodyTooLarge || error instanceof AdminBodyTimeout) response.setHeader('connection', 'close');
      sendJson(response, statusFor(error, ACTION_ERROR_STATUS), errorBody(error));
    }
  });
  return true;
}

function refuseMethod(response: ServerResponse, request: IncomingMessage, allowed: string): true {
  response.setHeader('allow', allowed);
  sendJson(response, 405, errorBody(new AdminMethodNotAllowed(request.method ?? '?', allowed)));
  return true;
}

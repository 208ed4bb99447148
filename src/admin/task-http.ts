/**
 * The `/tasks` requests of the main admin listener: the route, then the same checks as every
 * non-probe endpoint (token, request cap), then the route itself. Errors are answered with their
 * typed code: the queue's (404, 400, 409, 413, 429, 503) and the surface's (400, 401, 403, 405, 413).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TaskQueue } from '../bus/tasks/api.js';
import { serveAdmitted, type AdmissionCounter, type AdmissionLimits } from './admission.js';
import { AdminBodyTimeout, AdminBodyTooLarge, AdminMethodNotAllowed, AdminNotFound } from './errors.js';
import { errorBody, sendJson, statusFor } from './http-response.js';
import { matchTaskRoute, serveTaskRoute, TASK_ERROR_STATUS, type TaskRoute } from './task-routes.js';

export interface TaskHttpSettings extends AdmissionLimits {
  readonly tasks: TaskQueue;
  readonly host: string;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

export async function serveTasks(
  settings: TaskHttpSettings,
  listener: AdmissionCounter,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse,
): Promise<void> {
  let route: TaskRoute | undefined;
  try {
    route = matchTaskRoute(request.method ?? '?', url.pathname);
  } catch (error) {
    if (error instanceof AdminMethodNotAllowed) response.setHeader('allow', error.allowed);
    sendJson(response, 405, errorBody(error));
    return;
  }
  if (route === undefined) {
    sendJson(response, 404, errorBody(new AdminNotFound(url.pathname)));
    return;
  }
  const context = { queue: settings.tasks, host: settings.host, hasToken: listener.guard.hasToken, maxBodyBytes: settings.maxBodyBytes, bodyTimeoutMs: settings.bodyTimeoutMs };
  await serveAdmitted(listener, settings, request, response, async () => {
    try {
      await serveTaskRoute(context, route, request, url, response, sendJson);
    } catch (error) {
      // A body left unread past the cap or the deadline: the connection cannot be reused.
      if (error instanceof AdminBodyTooLarge || error instanceof AdminBodyTimeout) response.setHeader('connection', 'close');
      if (error instanceof AdminBodyTimeout) {
        listener.stats.bodyTimeouts++;
        // Whatever the sender still trickles in is not waited for: the socket goes once the answer is out.
        response.once('finish', () => request.socket.destroySoon());
      }
      sendJson(response, statusFor(error, TASK_ERROR_STATUS), errorBody(error));
    }
  });
}

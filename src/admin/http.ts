import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MoloError, type ActorRuntime, type Ref } from '../actors/index.js';
import { Admin, ADMIN_NAME, checkInteger, type HealthReport } from './admin-actor.js';
import {
  AdminErrorCode,
  AdminInvalidOption,
  AdminListenFailed,
  AdminMethodNotAllowed,
  AdminNotFound,
  AdminUnavailable,
  MetricsFailed,
} from './errors.js';

export const DEFAULT_ADMIN_HOST = '127.0.0.1';
/** The admin port when none is given; the CLI assumes it too. 0 asks the OS for a free port. */
export const DEFAULT_ADMIN_PORT = 9710;
/** Concurrent connections the admin surface accepts; it is for operators, not for traffic. */
export const MAX_ADMIN_CONNECTIONS = 64;
export const DEFAULT_ADMIN_REQUEST_TIMEOUT_MS = 20_000;
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The read-only endpoints, all GET. */
export const ADMIN_ENDPOINTS = ['/tree', '/processes', '/metrics', '/health'] as const;
export type AdminEndpoint = (typeof ADMIN_ENDPOINTS)[number];

/** Produces the Prometheus text exposition (`metricsText()` of src/telemetry, for one). */
export type MetricsSource = () => string | Promise<string>;

export interface AdminHttpOptions {
  /** Where the admin actor lives; the HTTP surface only ever talks to it by calls. */
  readonly runtime: ActorRuntime;
  readonly admin?: Ref | string;
  /** Default 127.0.0.1 (loopback): the surface has no authentication of its own. */
  readonly host?: string;
  /** Default {@link DEFAULT_ADMIN_PORT}; 0 for an ephemeral port. */
  readonly port?: number;
  /** Default: a minimal text with `molo_actors_alive` and `molo_root_supervisor_up`. */
  readonly metrics?: MetricsSource;
  /** How long one request may wait on the admin actor; default 20 s. */
  readonly requestTimeoutMs?: number;
}

export interface AdminHttpServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening and drops open connections; resolves once the server is closed. */
  close(): Promise<void>;
}

interface HttpSettings {
  readonly runtime: ActorRuntime;
  readonly admin: Ref | string;
  readonly metrics: MetricsSource | undefined;
  readonly requestTimeoutMs: number;
}

/** Starts the HTTP admin surface (node:http): JSON snapshots, Prometheus text and health, GET only. */
export async function startAdminHttp(options: AdminHttpOptions): Promise<AdminHttpServer> {
  const host = options.host ?? DEFAULT_ADMIN_HOST;
  if (typeof host !== 'string' || host.length === 0) throw new AdminInvalidOption('admin.host', 'must be a non-empty string');
  const port = options.port ?? DEFAULT_ADMIN_PORT;
  checkInteger('admin.port', port, 0, 65_535);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_ADMIN_REQUEST_TIMEOUT_MS;
  checkInteger('admin.requestTimeoutMs', requestTimeoutMs, 1, 120_000);
  if (options.metrics !== undefined && typeof options.metrics !== 'function') {
    throw new AdminInvalidOption('metrics', 'must be a function returning the Prometheus text');
  }
  const settings: HttpSettings = { runtime: options.runtime, admin: options.admin ?? ADMIN_NAME, metrics: options.metrics, requestTimeoutMs };
  const server = createServer((request, response) => {
    handle(settings, request, response).catch((error: unknown) => {
      // handle() answers every error itself; this is the last line, for a failure while answering.
      if (!response.headersSent) sendJson(response, 500, errorBody(error));
      else response.destroy();
    });
  });
  server.maxConnections = MAX_ADMIN_CONNECTIONS;
  server.requestTimeout = requestTimeoutMs + 5_000;
  server.headersTimeout = 10_000;
  await listen(server, host, port);
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    host,
    port: bound,
    close: () => closeServer(server),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(new AdminListenFailed(host, port, error));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    // Keep-alive connections (fetch keeps them) would hold close() open: drop them.
    server.closeAllConnections();
  });
}

async function handle(settings: HttpSettings, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://admin').pathname;
  if (request.method !== 'GET') {
    response.setHeader('allow', 'GET');
    sendJson(response, 405, errorBody(new AdminMethodNotAllowed(request.method ?? '?')));
    return;
  }
  const endpoint = ADMIN_ENDPOINTS.find((candidate) => candidate === path);
  if (endpoint === undefined) {
    sendJson(response, 404, errorBody(new AdminNotFound(path)));
    return;
  }
  await route(settings, endpoint, response);
}

async function route(settings: HttpSettings, endpoint: AdminEndpoint, response: ServerResponse): Promise<void> {
  const { runtime, admin, requestTimeoutMs } = settings;
  try {
    switch (endpoint) {
      case '/tree':
        sendJson(response, 200, await Admin.tree(runtime, admin, requestTimeoutMs));
        return;
      case '/processes':
        sendJson(response, 200, await Admin.processes(runtime, admin, requestTimeoutMs));
        return;
      case '/health': {
        const report = await Admin.health(runtime, admin, requestTimeoutMs);
        sendJson(response, report.status === 'ok' ? 200 : 503, report);
        return;
      }
      case '/metrics':
        await sendMetrics(settings, response);
        return;
      default: {
        const unknown: never = endpoint;
        throw new AdminNotFound(String(unknown));
      }
    }
  } catch (error) {
    if (endpoint === '/health' && error instanceof AdminUnavailable) {
      sendJson(response, 503, { status: 'down', error: errorBody(error).error });
      return;
    }
    sendJson(response, statusFor(error), errorBody(error));
  }
}

async function sendMetrics(settings: HttpSettings, response: ServerResponse): Promise<void> {
  let text: unknown;
  if (settings.metrics === undefined) {
    text = defaultMetrics(await Admin.health(settings.runtime, settings.admin, settings.requestTimeoutMs));
  } else {
    try {
      text = await settings.metrics();
    } catch (error) {
      throw new MetricsFailed(error);
    }
    if (typeof text !== 'string') throw new MetricsFailed(new TypeError(`metrics source returned ${typeof text}, not a string`));
  }
  response.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
  response.end(text);
}

/** Until telemetry is wired in: live actors and root liveness, the two numbers the admin knows. */
export function defaultMetrics(health: HealthReport): string {
  const label = `{node="${escapeLabel(health.node)}"}`;
  return [
    '# HELP molo_actors_alive Live actors on this node.',
    '# TYPE molo_actors_alive gauge',
    `molo_actors_alive${label} ${health.actors}`,
    '# HELP molo_root_supervisor_up 1 while the root supervisor is alive, else 0.',
    '# TYPE molo_root_supervisor_up gauge',
    `molo_root_supervisor_up${label} ${health.rootAlive ? 1 : 0}`,
    '',
  ].join('\n');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function statusFor(error: unknown): number {
  if (!(error instanceof MoloError)) return 500;
  switch (error.code) {
    case AdminErrorCode.Unavailable:
    case AdminErrorCode.Busy:
      return 503;
    case AdminErrorCode.NotFound:
      return 404;
    default:
      return 500;
  }
}

function errorBody(error: unknown): { error: { code: string; message: string } } {
  if (error instanceof MoloError) return { error: { code: error.code, message: error.message } };
  return { error: { code: AdminErrorCode.SnapshotFailed, message: error instanceof Error ? error.message : String(error) } };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  };
  if (status === 503) headers['retry-after'] = 1;
  response.writeHead(status, headers);
  response.end(text);
}

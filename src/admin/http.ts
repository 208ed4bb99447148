import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ActorRuntime, Ref } from '../actors/index.js';
import { Admin, ADMIN_NAME, checkInteger, type HealthReport } from './admin-actor.js';
import { AdminInvalidOption, AdminListenFailed, AdminMethodNotAllowed, AdminNotFound, AdminUnavailable, MetricsFailed } from './errors.js';
import { countAlive, renderBuiltinMetrics, type ProcessLister } from './builtin-metrics.js';
import { guardConnections } from './connection-guard.js';
import { serveNodes, type ClusterView } from './nodes-view.js';
import { requestGuard, type RequestGuard } from './request-guard.js';
import type { TaskQueue } from '../bus/tasks/api.js';
import { DEFAULT_ADMIN_BODY_TIMEOUT_MS, DEFAULT_ADMIN_MAX_BODY_BYTES, MAX_ADMIN_BODY_TIMEOUT_MS, MAX_ADMIN_MAX_BODY_BYTES } from './request-body.js';
import { serveTasks } from './task-http.js';
import { errorBody, sendJson, statusFor } from './http-response.js';
import { emptyAdminHttpStats, serveAdmitted, type AdminHttpStats } from './admission.js';
import { startObserver, type ObserverHandle } from './observer/start.js';
import type { ObserverOptions } from './observer/options.js';
import { serveObserver } from './observer/routes.js';
import { serveStreams } from './stream-routes.js';
import { PROGRAM_LOGS_PATH, serveProgramLogs } from './program-routes.js';
import type { StreamStore } from '../bus/streams/store.js';

export const DEFAULT_ADMIN_HOST = '127.0.0.1';
/** The admin port when none is given; the CLI assumes it too. 0 asks the OS for a free port. */
export const DEFAULT_ADMIN_PORT = 9710;
/** Sockets the admin surface keeps open at most (default); at the cap a new one evicts the oldest idle one. */
export const MAX_ADMIN_CONNECTIONS = 64;
export const MAX_ADMIN_CONNECTIONS_CAP = 1_024;
/** A connection must send a whole request head within this long of connecting (or of its last answer). */
export const DEFAULT_ADMIN_HEADER_TIMEOUT_MS = 5_000;
/** Non-probe requests (tree, processes, metrics) in progress at most; probes are not counted. */
export const DEFAULT_ADMIN_MAX_REQUESTS = 16;
export const DEFAULT_ADMIN_REQUEST_TIMEOUT_MS = 20_000;
/** How long `/readyz` waits on the admin actor: a kubelet's probe timeout is 1 s by default. */
export const PROBE_TIMEOUT_MS = 2_000;
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The read-only endpoints, all GET. */
export const ADMIN_ENDPOINTS = ['/tree', '/processes', '/metrics', '/health', '/livez', '/readyz', '/nodes'] as const;
export type AdminEndpoint = (typeof ADMIN_ENDPOINTS)[number];
/** What the ops port serves: probes and metrics, never the tree. */
export const OPS_ENDPOINTS: readonly AdminEndpoint[] = ['/metrics', '/health', '/livez', '/readyz'];
/** Probes: answered without a token and outside the request cap, so saturation cannot fail them. */
const PROBES: ReadonlySet<AdminEndpoint> = new Set(['/health', '/livez', '/readyz']);

/** Produces the Prometheus text exposition (`metricsText()` of src/telemetry, for one). */
export type MetricsSource = () => string | Promise<string>;

/** A second listener for `/metrics` and the probes, so Prometheus and the kubelet need not reach the tree. */
export interface OpsListenOptions {
  /** Default: the admin host. May be non-loopback without a token: it serves no tree. */
  readonly host?: string;
  /** 0 for an ephemeral port. */
  readonly port: number;
}

export interface AdminHttpOptions {
  /** Where the admin actor lives; the HTTP surface only ever talks to it by calls. */
  readonly runtime: ActorRuntime;
  readonly admin?: Ref | string;
  /** Default 127.0.0.1 (loopback). Any other address requires `token` (AdminTokenRequired otherwise). */
  readonly host?: string;
  /** Default {@link DEFAULT_ADMIN_PORT}; 0 for an ephemeral port. */
  readonly port?: number;
  /** Required off loopback (at least 16 characters): every endpoint but the probes then needs `authorization: Bearer <token>`. */
  readonly token?: string;
  /** Names besides the bound address (and loopback names, and any IP literal) that a `Host` header may carry; `*` for any. */
  readonly allowedHosts?: readonly string[];
  /** Default: a minimal text with `molo_actors_alive` and `molo_root_supervisor_up`. */
  readonly metrics?: MetricsSource;
  /** How long one request may wait on the admin actor; default 20 s. */
  readonly requestTimeoutMs?: number;
  /** Per connection: a whole request head within this long (default 5 s, 100 ms .. 60 s). */
  readonly headerTimeoutMs?: number;
  /** Open sockets at most, per listener (default 64, at most 1,024); the oldest idle one is evicted for a new one. */
  readonly maxConnections?: number;
  /** Non-probe requests in progress at most (default 16, or half of `maxConnections` if less); more get 503 ADMIN_OVERLOADED. */
  readonly maxRequests?: number;
  /**
   * Of those, mutating (non-GET) requests at most (default half of `maxRequests`, 1 .. `maxRequests` − 1),
   * so that slow writes leave slots for reads; more get 503 ADMIN_OVERLOADED.
   */
  readonly maxWriteRequests?: number;
  /** A request body must arrive whole within this long (default 10 s, 100 ms .. 120 s); else 408 ADMIN_BODY_TIMEOUT. */
  readonly bodyTimeoutMs?: number;
  /** A separate listener for `/metrics` and the probes. */
  readonly ops?: OpsListenOptions;
  /** Serves the `/tasks` endpoints (see task-routes.ts) on the main listener, through this queue's public API. */
  readonly tasks?: TaskQueue;
  /** A cluster node's view (`clusterView(node)`): serves `/nodes` and `/nodes/<name>/tree`; without it they answer 404. */
  readonly nodes?: ClusterView;
  /** Request bodies of the mutating endpoints at most (default 8 MiB, 1 KiB .. 64 MiB); more get 413. */
  readonly maxBodyBytes?: number;
  /** Serves the read-only `/streams` endpoints (see stream-routes.ts) through this store's public API. */
  readonly streams?: StreamStore;
  /** The observer page at `/`, its `/events` stream and `/actions` (docs/observer.md); `false` leaves them out. */
  readonly observer?: ObserverOptions | false;
}

export interface AdminHttpServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The ops listener's URL, when `ops` was given. */
  readonly opsUrl: string | undefined;
  /** Refusals of the main listener: bodies cut at `bodyTimeoutMs`, writes and requests over their caps. */
  readonly stats: Readonly<AdminHttpStats>;
  /** The observer's event streams (open, refused, frames sent and skipped); undefined with `observer: false`. */
  readonly events: ObserverHandle['hub']['stats'] | undefined;
  /** Stops listening and drops open connections; resolves once the server is closed. */
  close(): Promise<void>;
}

interface HttpSettings {
  readonly runtime: ActorRuntime;
  readonly admin: Ref | string;
  readonly metrics: MetricsSource | undefined;
  readonly requestTimeoutMs: number;
  readonly maxRequests: number;
  readonly maxWriteRequests: number;
  readonly bodyTimeoutMs: number;
  readonly host: string;
  readonly tasks: TaskQueue | undefined;
  readonly nodes?: ClusterView;
  readonly maxBodyBytes: number;
  readonly observer: ObserverHandle | undefined;
  readonly streams: StreamStore | undefined;
}

interface Listener {
  readonly endpoints: readonly AdminEndpoint[];
  readonly guard: RequestGuard;
  /** Non-probe requests in progress on this listener, and the mutating ones among them. */
  inFlight: number;
  writesInFlight: number;
  readonly stats: AdminHttpStats;
}

function listenerOf(endpoints: readonly AdminEndpoint[], guard: RequestGuard): Listener {
  return { endpoints, guard, inFlight: 0, writesInFlight: 0, stats: emptyAdminHttpStats() };
}

/**
 * Starts the HTTP admin surface (node:http): JSON snapshots, Prometheus text and probes, GET only;
 * and, with `ops`, a second listener for metrics and probes alone.
 */
export async function startAdminHttp(options: AdminHttpOptions): Promise<AdminHttpServer> {
  const host = options.host ?? DEFAULT_ADMIN_HOST;
  if (typeof host !== 'string' || host.length === 0) throw new AdminInvalidOption('admin.host', 'must be a non-empty string');
  const port = options.port ?? DEFAULT_ADMIN_PORT;
  checkInteger('admin.port', port, 0, 65_535);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_ADMIN_REQUEST_TIMEOUT_MS;
  checkInteger('admin.requestTimeoutMs', requestTimeoutMs, 1, 120_000);
  const headerTimeoutMs = options.headerTimeoutMs ?? DEFAULT_ADMIN_HEADER_TIMEOUT_MS;
  checkInteger('admin.headerTimeoutMs', headerTimeoutMs, 100, 60_000);
  const maxConnections = options.maxConnections ?? MAX_ADMIN_CONNECTIONS;
  checkInteger('admin.maxConnections', maxConnections, 2, MAX_ADMIN_CONNECTIONS_CAP);
  // Below the connection budget, so probes always find room beside the tree requests.
  const maxRequests = options.maxRequests ?? Math.min(DEFAULT_ADMIN_MAX_REQUESTS, Math.floor(maxConnections / 2));
  checkInteger('admin.maxRequests', maxRequests, 1, maxConnections - 1);
  // Below maxRequests, so reads always keep a slot (but for maxRequests = 1, which has none to share).
  const maxWriteRequests = options.maxWriteRequests ?? Math.max(1, Math.floor(maxRequests / 2));
  checkInteger('admin.maxWriteRequests', maxWriteRequests, 1, Math.max(1, maxRequests - 1));
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_ADMIN_BODY_TIMEOUT_MS;
  checkInteger('admin.bodyTimeoutMs', bodyTimeoutMs, 100, MAX_ADMIN_BODY_TIMEOUT_MS);
  if (options.metrics !== undefined && typeof options.metrics !== 'function') {
    throw new AdminInvalidOption('metrics', 'must be a function returning the Prometheus text');
  }
  const ops = options.ops;
  if (ops !== undefined && (ops === null || typeof ops !== 'object')) throw new AdminInvalidOption('admin.ops', 'must be { host?, port }');
  const opsHost = ops?.host ?? host;
  if (ops !== undefined) {
    if (typeof opsHost !== 'string' || opsHost.length === 0) throw new AdminInvalidOption('admin.ops.host', 'must be a non-empty string');
    checkInteger('admin.ops.port', ops.port, 0, 65_535);
  }
  // Checked before anything listens: a refused configuration leaves nothing open.
  const mainGuard = requestGuard({ host, token: options.token, allowedHosts: options.allowedHosts, requireTokenOffLoopback: true });
  const opsGuard = ops === undefined ? undefined : requestGuard({ host: opsHost, token: options.token, allowedHosts: options.allowedHosts, requireTokenOffLoopback: false });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_ADMIN_MAX_BODY_BYTES;
  checkInteger('admin.maxBodyBytes', maxBodyBytes, 1_024, MAX_ADMIN_MAX_BODY_BYTES);
  if (options.tasks !== undefined && typeof options.tasks?.enqueue !== 'function') throw new AdminInvalidOption('admin.tasks', 'must be a TaskQueue');
  if (options.streams !== undefined && typeof options.streams?.streamInfo !== 'function') throw new AdminInvalidOption('admin.streams', 'must be a StreamStore');
  const settings: HttpSettings = {
    runtime: options.runtime,
    admin: options.admin ?? ADMIN_NAME,
    metrics: options.metrics,
    requestTimeoutMs,
    maxRequests,
    maxWriteRequests,
    bodyTimeoutMs,
    host,
    tasks: options.tasks,
    nodes: options.nodes,
    maxBodyBytes,
    streams: options.streams,
    observer:
      options.observer === false
        ? undefined
        : startObserver(options.observer, maxConnections, { runtime: options.runtime, admin: options.admin ?? ADMIN_NAME, nodes: options.nodes, tasks: options.tasks, timeoutMs: requestTimeoutMs }),
  };
  const limits = { headerTimeoutMs, maxConnections };
  const mainListener = listenerOf(ADMIN_ENDPOINTS, mainGuard);
  let main: Server;
  try {
    main = await serve(settings, mainListener, host, port, limits);
  } catch (error) {
    await settings.observer?.close();
    throw error;
  }
  let opsServer: Server | undefined;
  if (opsGuard !== undefined) {
    try {
      opsServer = await serve(settings, listenerOf(OPS_ENDPOINTS, opsGuard), opsHost, ops!.port, limits);
    } catch (error) {
      await settings.observer?.close();
      await closeServer(main);
      throw error;
    }
  }
  const bound = (main.address() as AddressInfo).port;
  return {
    url: urlOf(host, bound),
    host,
    port: bound,
    opsUrl: opsServer === undefined ? undefined : urlOf(opsHost, (opsServer.address() as AddressInfo).port),
    stats: mainListener.stats,
    events: settings.observer?.hub.stats,
    close: async () => {
      // Event streams never finish on their own: end them first, or close() would wait on them.
      await settings.observer?.close();
      await Promise.all([closeServer(main), opsServer === undefined ? undefined : closeServer(opsServer)]);
    },
  };
}

function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function serve(settings: HttpSettings, listener: Listener, host: string, port: number, limits: { headerTimeoutMs: number; maxConnections: number }): Promise<Server> {
  const server = createServer((request, response) => {
    handle(settings, listener, request, response).catch((error: unknown) => {
      // handle() answers every error itself; this is the last line, for a failure while answering.
      if (!response.headersSent) sendJson(response, 500, errorBody(error));
      else response.destroy();
    });
  });
  // The guard enforces the connection budget and header deadline itself (Node's checks are too coarse).
  guardConnections(server, limits);
  // Node's own cut (checked only every 30 s) stays behind ours: the body deadline answers first.
  server.requestTimeout = Math.max(settings.requestTimeoutMs, settings.bodyTimeoutMs) + 5_000;
  server.headersTimeout = limits.headerTimeoutMs;
  server.keepAliveTimeout = Math.min(5_000, limits.headerTimeoutMs);
  await listen(server, host, port);
  return server;
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

async function handle(settings: HttpSettings, listener: Listener, request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    listener.guard.checkHost(request);
  } catch (error) {
    // 421 Misdirected Request: this server is not the one the name points at.
    sendJson(response, 421, errorBody(error));
    return;
  }
  const url = new URL(request.url ?? '/', 'http://admin');
  const path = url.pathname;
  if (settings.tasks !== undefined && listener.endpoints === ADMIN_ENDPOINTS && (path === '/tasks' || path.startsWith('/tasks/'))) {
    await serveTasks({ ...settings, tasks: settings.tasks }, listener, request, url, response);
    return;
  }
  if (settings.streams !== undefined && listener.endpoints === ADMIN_ENDPOINTS && (path === '/streams' || path.startsWith('/streams/'))) {
    await serveStreams(settings.streams, settings, listener, request, url, response);
    return;
  }
  if (listener.endpoints === ADMIN_ENDPOINTS && path === PROGRAM_LOGS_PATH) {
    const context = { runtime: settings.runtime, admin: settings.admin, nodes: settings.nodes, timeoutMs: settings.requestTimeoutMs };
    await serveProgramLogs(context, settings, listener, request, url, response);
    return;
  }
  if (settings.observer !== undefined && listener.endpoints === ADMIN_ENDPOINTS && (await serveObserver(settings.observer, settings, listener, request, url, response))) return;
  if (request.method !== 'GET') {
    response.setHeader('allow', 'GET');
    sendJson(response, 405, errorBody(new AdminMethodNotAllowed(request.method ?? '?')));
    return;
  }
  const endpoint = listener.endpoints.find((candidate) => candidate === path || (candidate === '/nodes' && path.startsWith('/nodes/')));
  if (endpoint === undefined) {
    sendJson(response, 404, errorBody(new AdminNotFound(path)));
    return;
  }
  if (PROBES.has(endpoint)) {
    await route(settings, endpoint, response, path);
    return;
  }
  await serveAdmitted(listener, settings, request, response, () => route(settings, endpoint, response, path));
}

async function route(settings: HttpSettings, endpoint: AdminEndpoint, response: ServerResponse, path: string): Promise<void> {
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
        sendJson(response, report.status === 'ok' || report.status === 'degraded' ? 200 : 503, report);
        return;
      }
      case '/livez':
        // The node runs: this process answers. Nothing else is asked, so a busy tree cannot fail it.
        sendJson(response, 200, { status: 'ok' });
        return;
      case '/readyz': {
        // Started and not draining: what the admin actor knows, asked with a probe's patience.
        const report = await Admin.health(runtime, admin, Math.min(requestTimeoutMs, PROBE_TIMEOUT_MS));
        // Degraded still serves: ready.
        sendJson(response, report.status === 'ok' || report.status === 'degraded' ? 200 : 503, { status: report.status });
        return;
      }
      case '/metrics':
        await sendMetrics(settings, response);
        return;
      case '/nodes':
        sendJson(response, 200, await serveNodes(settings.nodes, path, requestTimeoutMs));
        return;
      default: {
        const unknown: never = endpoint;
        throw new AdminNotFound(String(unknown));
      }
    }
  } catch (error) {
    if ((endpoint === '/health' || endpoint === '/readyz') && error instanceof AdminUnavailable) {
      sendJson(response, 503, { status: 'down', error: errorBody(error).error });
      return;
    }
    sendJson(response, statusFor(error), errorBody(error));
  }
}

async function sendMetrics(settings: HttpSettings, response: ServerResponse): Promise<void> {
  let text: unknown;
  if (settings.metrics === undefined) {
    const health = await Admin.health(settings.runtime, settings.admin, settings.requestTimeoutMs);
    text = defaultMetrics(health, await aliveByBehaviour(settings));
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

/**
 * Until telemetry is wired in: live actors by behaviour and root liveness, in telemetry's names,
 * labels and help texts (docs/telemetry.md), so a dashboard reads either the same.
 */
export function defaultMetrics(health: HealthReport, alive: ReadonlyMap<string, number>): string {
  return renderBuiltinMetrics(alive, health.rootAlive);
}

/** Counted on the runtime when it lists its processes (an ActorSystem), else from the admin's process snapshot. */
async function aliveByBehaviour(settings: HttpSettings): Promise<ReadonlyMap<string, number>> {
  const runtime = settings.runtime as ActorRuntime & Partial<ProcessLister>;
  if (typeof runtime.processes === 'function') return countAlive(runtime as ProcessLister);
  const snapshot = await Admin.processes(settings.runtime, settings.admin, settings.requestTimeoutMs);
  const alive = new Map<string, number>();
  for (const entry of snapshot.processes) alive.set(entry.behaviour, (alive.get(entry.behaviour) ?? 0) + 1);
  return alive;
}

import { ActorSystem, formatReason, type ActorSystemOptions, type ExitReason, type Ref } from '../actors/index.js';
import { Supervisor, type SupervisorSpec } from '../behaviours/index.js';
import { ProgramSupervisor } from '../behaviours/programs/index.js';
import { Admin, checkInteger, DEFAULT_SNAPSHOT_TIMEOUT_MS, type AdminOptions } from './admin-actor.js';
import { AdminInvalidOption, NodeStartFailed } from './errors.js';
import { unknownOptionKey } from '../actors/option-keys.js';
import { startAdminHttp, type AdminHttpOptions, type AdminHttpServer, type MetricsSource } from './http.js';
import { programsProvider, streamConsumersProvider, type SnapshotProvider } from './snapshot-provider.js';
import { checkNodeMetricsOption, nodeMetrics, type NodeMetricsOptions } from './node-metrics.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { taskPoolsProvider } from '../bus/tasks/workers.js';
import { schedulerProvider } from '../bus/scheduler/supervised.js';
import { replicationProviders } from '../nodes/replication/replication.js';
import { roomsProviders } from '../nodes/rooms/admin-provider.js';
import { resolveLogger, type LoggerOption } from '../telemetry/logger.js';
import type { Logger } from '../telemetry/logger-api.js';

/**
 * Below Kubernetes' default `terminationGracePeriodSeconds` (30 s), which SIGKILLs the pod when it
 * ends: the node must finish (or give up and exit 1) first. Raise both together.
 */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 25_000;
/** No node may take longer than this to stop gracefully; past it, everything is killed. */
export const MAX_SHUTDOWN_DEADLINE_MS = 600_000;
/** Signals this soon after the one that began a stop are copies of it (relayed by npm, tsx), not a request to force. */
export const REPEAT_SIGNAL_WINDOW_MS = 1_000;
/** The root supervisor's registered name, unless told otherwise. */
export const ROOT_NAME = 'root';

/** Structured node events: `node.started`, `node.stopping`, `node.stopped`, `node.deadline_exceeded`, … */
export type NodeLog = (level: 'info' | 'warn' | 'error', event: string, fields: Readonly<Record<string, unknown>>) => void;

/** @deprecated One JSON line per event on stderr with a string level; node events now go through `logger` (pino). */
export const stderrLog: NodeLog = (level, event, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), event, ...fields })}\n`);
};

export interface AdminSurfaceOptions extends Pick<AdminHttpOptions, 'token' | 'observer' | 'streams' | 'nodes' | 'allowedHosts' | 'headerTimeoutMs' | 'maxConnections' | 'maxRequests' | 'maxWriteRequests' | 'ops' | 'tasks' | 'maxBodyBytes' | 'bodyTimeoutMs'> {
  /** Default 9710; 0 picks a free port (read it from `adminUrl`). */
  readonly port?: number;
  /** Default 127.0.0.1. Any other address needs `token` (startNode rejects with ADMIN_TOKEN_REQUIRED). */
  readonly host?: string;
}

export interface NodeOptions {
  /** The node name of a system startNode creates (default `local`). */
  readonly node?: string;
  /** An existing system to run on (tests pass `testSystem()`), or options for a new one. */
  readonly system?: ActorSystem | ActorSystemOptions;
  /** The root supervisor: started after the admin actor, stopped first on shutdown. */
  readonly root: SupervisorSpec;
  /** Registered name of the root supervisor; default `root`. */
  readonly rootName?: string;
  /** The HTTP admin surface; `false` runs the admin actor without HTTP. */
  readonly admin?: AdminSurfaceOptions | false;
  /**
   * `/metrics`: a source of your own (telemetry's `metricsText`, say) replaces the default; options
   * tune it. The default serves the runtime's metrics (actors, mailboxes, exits and crashes,
   * supervisor restarts: from telemetry this node's system gets when startNode creates it without an
   * observer, else from the system's telemetry, else sampled), Node's process metrics, the task and
   * stream metrics of `admin.tasks` and `admin.streams`, and `registries` (docs/telemetry.md).
   */
  readonly metrics?: MetricsSource | NodeMetricsOptions;
  /**
   * Describers for processes outside the Supervisor API. Program supervisors are always described
   * (`sections.programs`); a provider given here for the same behaviour replaces that default.
   */
  readonly snapshotProviders?: readonly SnapshotProvider[];
  /** What else `/health` asks (replication lag, …): a problem makes the node `degraded`, named in the answer. */
  readonly healthChecks?: AdminOptions['healthChecks'];
  /** Snapshot options of the admin actor (cap, timeouts). */
  readonly snapshot?: Pick<AdminOptions, 'maxSnapshotBytes' | 'callTimeoutMs' | 'snapshotTimeoutMs'>;
  /** How long a graceful stop may take before everything is killed; default 25 s (below Kubernetes' 30 s grace), at most 10 min. */
  readonly shutdownDeadlineMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT; default true. A second signal while stopping forces the stop. */
  readonly signals?: boolean;
  /** After a stop caused by a signal (or by the root's exit, with `onRootExit: 'stop'`), exit the process with its exit code; default = `signals`. */
  readonly exitProcess?: boolean;
  /**
   * When the root supervisor exits on its own (say, past its restart intensity): `keep` the node up
   * with health answering `down` (503), as OTP keeps a node whose temporary application stopped;
   * or `stop` the node (exit code 1). Default `keep`.
   */
  readonly onRootExit?: 'keep' | 'stop';
  /**
   * Where node events (`node.started`, `node.stopping`, …) go, and the root logger of the system
   * startNode creates: a pino logger, options for one (`{ level: 'warn' }`), or `false`. Default:
   * the system's logger (the process's default: JSON lines on stderr at `$MOLO_LOG_LEVEL`, else `info`).
   */
  readonly logger?: LoggerOption;
  /** @deprecated A function per event, from before `logger`; when given, node events go to it instead. */
  readonly log?: NodeLog;
}

export type StopTrigger = 'stop' | 'SIGTERM' | 'SIGINT' | 'root-exit';

export interface NodeStopResult {
  /** True when the root supervisor stopped (children in reverse order) within the deadline. */
  readonly clean: boolean;
  /** 0 after a clean stop; 1 when the deadline was hit (everything then killed) or the root had exited on its own. */
  readonly exitCode: 0 | 1;
  readonly trigger: StopTrigger;
  /** How the root supervisor exited, formatted. */
  readonly rootExit: string;
  readonly durationMs: number;
}

/** A running node: its system, root supervisor and admin surface. */
export interface MoloNode {
  readonly system: ActorSystem;
  readonly root: Ref;
  readonly admin: Ref;
  /** `http://127.0.0.1:PORT`; undefined when started with `admin: false`. */
  readonly adminUrl: string | undefined;
  /** The ops listener (`/metrics` and probes), when `admin.ops` was given. */
  readonly opsUrl: string | undefined;
  readonly stopping: boolean;
  /**
   * Graceful stop: the root supervisor stops its children in reverse start order, each within its
   * own shutdown timeout, all within `shutdownDeadlineMs`; then the admin and HTTP surface stop.
   * Idempotent: every call returns the same result.
   */
  stop(reason?: ExitReason): Promise<NodeStopResult>;
  /** Resolves once the node has stopped, whoever stopped it. */
  readonly stopped: Promise<NodeStopResult>;
}

interface NodeSettings {
  readonly rootName: string;
  readonly shutdownDeadlineMs: number;
  readonly signals: boolean;
  readonly exitProcess: boolean;
  readonly onRootExit: 'keep' | 'stop';
  log: NodeLog;
}

/**
 * Starts a node: the actor system (unless given one), the admin actor (registered as `admin`), the
 * HTTP admin surface, then the root supervisor; installs SIGTERM/SIGINT handlers for a graceful stop.
 * Rejects with NodeStartFailed when the root cannot start, AdminListenFailed when the port is taken;
 * nothing is left running either way.
 */
export async function startNode(options: NodeOptions): Promise<MoloNode> {
  const settings = resolveNodeOptions(options);
  const given = options.system instanceof ActorSystem ? options.system : undefined;
  if (given !== undefined && options.node !== undefined && options.node !== given.node) {
    throw new AdminInvalidOption('node', `'${options.node}' differs from the given system's node '${given.node}'`);
  }
  const system = given ?? new ActorSystem(createdSystemOptions(options, settings.rootName));
  if (options.log === undefined) settings.log = loggerLog(given !== undefined && options.logger !== undefined ? resolveLogger(options.logger) : system.logger);
  const release = (): void => {
    if (given === undefined) system.shutdown();
  };

  let admin: Ref;
  try {
    admin = await Admin.start({ system, providers: withDefaultProviders(options.snapshotProviders ?? []), ...(options.healthChecks === undefined ? {} : { healthChecks: options.healthChecks }), ...options.snapshot });
  } catch (error) {
    release();
    throw error;
  }
  let http: AdminHttpServer | undefined;
  if (options.admin !== false) {
    try {
      http = await startAdminHttp({
        runtime: system,
        admin,
        ...options.admin,
        metrics:
          typeof options.metrics === 'function'
            ? options.metrics
            : nodeMetrics({ system, rootName: settings.rootName, tasks: options.admin?.tasks, streams: options.admin?.streams, options: options.metrics }),
        // A request waits for a whole tree walk, plus slack.
        requestTimeoutMs: (options.snapshot?.snapshotTimeoutMs ?? DEFAULT_SNAPSHOT_TIMEOUT_MS) + 5_000,
      });
    } catch (error) {
      await Admin.stop(system, admin);
      release();
      throw error;
    }
  }
  let root: Ref;
  try {
    root = await Supervisor.start(system, options.root, { name: settings.rootName });
  } catch (error) {
    await http?.close();
    await Admin.stop(system, admin);
    release();
    throw new NodeStartFailed(system.node, error);
  }
  Admin.attachRoot(system, admin, root);
  const node = new RunningNode(system, root, admin, http, given === undefined, settings);
  settings.log('info', 'node.started', { node: system.node, root: String(root), adminUrl: http?.url ?? null });
  return node;
}

class RunningNode implements MoloNode {
  readonly stopped: Promise<NodeStopResult>;
  #resolveStopped!: (result: NodeStopResult) => void;
  #stop: Promise<NodeStopResult> | undefined;
  /** Ends the graceful phase at once (a second signal). */
  #force: (() => void) | undefined;
  /** When the signal that began the stop arrived; copies within REPEAT_SIGNAL_WINDOW_MS are not a second one. */
  #firstSignalAt = 0;
  readonly #onSignal = (signal: NodeJS.Signals): void => this.#signalled(signal);

  constructor(
    readonly system: ActorSystem,
    readonly root: Ref,
    readonly admin: Ref,
    readonly http: AdminHttpServer | undefined,
    readonly ownsSystem: boolean,
    readonly settings: NodeSettings,
  ) {
    this.stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
    if (settings.signals) {
      process.on('SIGTERM', this.#onSignal);
      process.on('SIGINT', this.#onSignal);
    }
    void system.exited(root).then((reason) => this.#rootExited(reason));
  }

  get adminUrl(): string | undefined {
    return this.http?.url;
  }

  get opsUrl(): string | undefined {
    return this.http?.opsUrl;
  }

  get stopping(): boolean {
    return this.#stop !== undefined;
  }

  stop(reason: ExitReason = 'shutdown'): Promise<NodeStopResult> {
    return this.#begin('stop', reason);
  }

  #begin(trigger: StopTrigger, reason: ExitReason): Promise<NodeStopResult> {
    this.#stop ??= this.#run(trigger, reason).then((result) => {
      this.#resolveStopped(result);
      return result;
    });
    return this.#stop;
  }

  #signalled(signal: NodeJS.Signals): void {
    // One Ctrl-C reaches us several times: the terminal signals the whole process group, and npm and
    // tsx each relay it again (tsx re-sends one its child did not acknowledge within 30 ms). Only a
    // signal well after the first is a person asking to force the stop.
    if (this.#stop !== undefined && Date.now() - this.#firstSignalAt < REPEAT_SIGNAL_WINDOW_MS) return;
    if (this.#stop === undefined) this.#firstSignalAt = Date.now();
    if (this.#stop !== undefined) {
      this.settings.log('warn', 'node.forced', { node: this.system.node, signal });
      this.#force?.();
      return;
    }
    void this.#begin(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM', 'shutdown').then((result) => this.#exit(result));
  }

  #rootExited(reason: ExitReason): void {
    if (this.#stop !== undefined) return;
    this.settings.log('error', 'node.root_exited', { node: this.system.node, reason: formatReason(reason), action: this.settings.onRootExit });
    if (this.settings.onRootExit === 'stop') void this.#begin('root-exit', 'shutdown').then((result) => this.#exit(result));
  }

  #exit(result: NodeStopResult): void {
    if (this.settings.exitProcess) process.exit(result.exitCode);
  }

  async #run(trigger: StopTrigger, reason: ExitReason): Promise<NodeStopResult> {
    const { system, settings } = this;
    const startedAt = Date.now();
    settings.log('info', 'node.stopping', { node: system.node, trigger, deadlineMs: settings.shutdownDeadlineMs });
    // Health answers `draining` (503) from here on, so load balancers stop sending work.
    Admin.drain(system, this.admin);
    let timer: NodeJS.Timeout | undefined;
    const cutOff = new Promise<'deadline' | 'forced'>((resolve) => {
      this.#force = () => resolve('forced');
      timer = setTimeout(() => resolve('deadline'), settings.shutdownDeadlineMs);
    });
    let rootExit: ExitReason = 'killed';
    const graceful = (async (): Promise<'stopped'> => {
      rootExit = await Supervisor.stop(system, this.root, reason);
      await Admin.stop(system, this.admin);
      return 'stopped';
    })();
    const outcome = await Promise.race([graceful, cutOff]);
    clearTimeout(timer);
    this.#force = undefined;
    const clean = outcome === 'stopped';
    if (!clean) {
      settings.log('error', 'node.deadline_exceeded', {
        node: system.node,
        deadlineMs: settings.shutdownDeadlineMs,
        cause: outcome,
        alive: system.actorCount,
      });
      // Past the deadline nothing is graceful any more: every remaining actor exits at once.
      system.shutdown();
    } else if (this.ownsSystem) {
      system.shutdown();
    }
    await this.http?.close();
    // A stop that ends in process.exit keeps its handlers to the end: with none, a late copy of the
    // Ctrl-C (relayed by npm or tsx) would find the default action and kill the process by signal.
    if (!this.settings.exitProcess || trigger === 'stop') this.#removeSignalHandlers();
    const result: NodeStopResult = {
      clean,
      exitCode: clean && trigger !== 'root-exit' ? 0 : 1,
      trigger,
      rootExit: clean ? formatReason(rootExit) : 'killed',
      durationMs: Date.now() - startedAt,
    };
    settings.log(clean ? 'info' : 'error', 'node.stopped', { node: system.node, ...result });
    return result;
  }

  #removeSignalHandlers(): void {
    if (!this.settings.signals) return;
    process.off('SIGTERM', this.#onSignal);
    process.off('SIGINT', this.#onSignal);
  }
}

/**
 * The options of the system startNode creates. Unless the caller brings an observer or a metrics
 * source, the system gets telemetry that counts what only an observer sees (exits, crashes,
 * supervisor restarts), writing its reports through the same logger the system would have had.
 */
function createdSystemOptions(options: NodeOptions, rootName: string): ActorSystemOptions {
  const base: ActorSystemOptions = {
    ...(options.system as ActorSystemOptions | undefined),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.node === undefined ? {} : { node: options.node }),
  };
  if (base.observer !== undefined || typeof options.metrics === 'function') return base;
  // Process metrics are not asked of it: the node's /metrics serves them once per process (node-metrics.ts).
  const telemetry = new Telemetry({ logger: base.logger, metrics: { rootName } });
  return { ...base, logger: telemetry.logger, observer: telemetry };
}

/** Program supervisors (with their health), stream consumers, task pools, schedulers, replicators and rooms are part of every node's snapshot, unless a caller's provider replaces one. */
function withDefaultProviders(providers: readonly SnapshotProvider[]): SnapshotProvider[] {
  const defaults = [programsProvider(ProgramSupervisor.status), streamConsumersProvider(), taskPoolsProvider(), schedulerProvider(), ...replicationProviders(), ...roomsProviders()];
  return [...defaults.filter((fallback) => !providers.some((provider) => provider.behaviour === fallback.behaviour)), ...providers];
}

const NODE_OPTION_KEYS: readonly (keyof NodeOptions)[] = [
  'node', 'system', 'root', 'rootName', 'admin', 'metrics', 'snapshotProviders', 'healthChecks', 'snapshot', 'shutdownDeadlineMs', 'signals',
  'exitProcess', 'onRootExit', 'logger', 'log',
];
const ADMIN_SURFACE_KEYS: readonly (keyof AdminSurfaceOptions)[] = [
  'host', 'port', 'token', 'allowedHosts', 'headerTimeoutMs', 'maxConnections', 'maxRequests', 'maxWriteRequests', 'ops', 'tasks',
  'maxBodyBytes', 'bodyTimeoutMs', 'observer', 'streams', 'nodes',
];
const SNAPSHOT_KEYS: readonly string[] = ['maxSnapshotBytes', 'callTimeoutMs', 'snapshotTimeoutMs'];

/** A misspelt option (`shutdownDeadline`, `admin.prot`) is refused with the nearest known key, not ignored. */
function refuseUnknownKeys(prefix: string, options: object, known: readonly string[]): void {
  const unknown = unknownOptionKey(options, known);
  if (unknown !== undefined) throw new AdminInvalidOption(`${prefix}${unknown.key}`, unknown.detail);
}

function resolveNodeOptions(options: NodeOptions): NodeSettings {
  if (options === null || typeof options !== 'object') throw new AdminInvalidOption('options', 'must be an object');
  if (options.root === null || typeof options.root !== 'object') throw new AdminInvalidOption('root', 'must be a SupervisorSpec');
  const shutdownDeadlineMs = options.shutdownDeadlineMs ?? DEFAULT_SHUTDOWN_DEADLINE_MS;
  checkInteger('shutdownDeadlineMs', shutdownDeadlineMs, 1, MAX_SHUTDOWN_DEADLINE_MS);
  const rootName = options.rootName ?? ROOT_NAME;
  if (typeof rootName !== 'string' || rootName.length === 0) throw new AdminInvalidOption('rootName', 'must be a non-empty string');
  const onRootExit = options.onRootExit ?? 'keep';
  if (onRootExit !== 'keep' && onRootExit !== 'stop') throw new AdminInvalidOption('onRootExit', `must be keep or stop, got ${String(onRootExit)}`);
  if (options.admin !== undefined && options.admin !== false && (options.admin === null || typeof options.admin !== 'object')) {
    throw new AdminInvalidOption('admin', 'must be { port?, host? } or false');
  }
  refuseUnknownKeys('', options, NODE_OPTION_KEYS);
  checkNodeMetricsOption(options.metrics);
  if (options.admin) refuseUnknownKeys('admin.', options.admin, ADMIN_SURFACE_KEYS);
  if (options.snapshot !== undefined) refuseUnknownKeys('snapshot.', options.snapshot, SNAPSHOT_KEYS);
  const signals = options.signals ?? true;
  return {
    rootName,
    shutdownDeadlineMs,
    signals,
    exitProcess: options.exitProcess ?? signals,
    onRootExit,
    log: options.log ?? stderrLog,
  };
}

/** Node events through a pino logger: `event` as a field and as the message, as every report. */
function loggerLog(logger: Logger): NodeLog {
  return (level, event, fields) => logger[level]({ event, ...fields }, event);
}

import {
  ActorErrorCode,
  MoloError,
  type ActorRuntime,
  type ActorSystem,
  type DownMessage,
  type ExitMessage,
  type Ref,
} from '../actors/index.js';
import { GenServer, NO_REPLY, type From, type NoReply, type ServerRef } from '../behaviours/index.js';
import { AdminBusy, AdminInvalidOption, AdminUnavailable, SnapshotFailed } from './errors.js';
import { takeProcessSnapshot, type ProcessSnapshot } from './process-snapshot.js';
import { jsonBytes, MAX_SNAPSHOT_BYTES, MIN_SNAPSHOT_BYTES } from './snapshot-budget.js';
import type { SnapshotProvider } from './snapshot-provider.js';
import { takeTreeSnapshot, type TreeSnapshot } from './tree-snapshot.js';

/** The name the admin actor is registered under on every node. */
export const ADMIN_NAME = 'admin';
/** Tree snapshots one admin actor takes at once; more are refused with AdminBusy. */
export const MAX_CONCURRENT_SNAPSHOTS = 4;
export const DEFAULT_SNAPSHOT_CALL_TIMEOUT_MS = 5_000;
export const DEFAULT_SNAPSHOT_TIMEOUT_MS = 10_000;
/** The longest a snapshot (and a single call within it) may be allowed to take. */
export const MAX_SNAPSHOT_TIMEOUT_MS = 60_000;
/** What a client waits for a tree snapshot by default: the walk's limit plus slack. */
const DEFAULT_TREE_CALL_TIMEOUT_MS = DEFAULT_SNAPSHOT_TIMEOUT_MS + 5_000;

export interface AdminOptions {
  /** The node whose processes the admin lists (`processes()` is an ActorSystem method). */
  readonly system: ActorSystem;
  /** The root supervisor; may also be attached later with `Admin.attachRoot`. */
  readonly root?: Ref;
  /** Describers for processes the Supervisor API does not cover (program supervisors, …). */
  readonly providers?: readonly SnapshotProvider[];
  /** Snapshot cap in bytes; default and maximum 1 MiB (S7-10). */
  readonly maxSnapshotBytes?: number;
  /** Per supervisor or provider call during a tree snapshot; default 5 s. */
  readonly callTimeoutMs?: number;
  /** For a whole tree snapshot; default 10 s. */
  readonly snapshotTimeoutMs?: number;
  /** Registered name; default `admin`. */
  readonly name?: string;
  /**
   * What else `/health` asks: each check lists its problems (a replication peer far behind, …);
   * any problem makes a running node `degraded` (HTTP 200: it still serves), with the problems named.
   * At most {@link MAX_HEALTH_CHECKS}.
   */
  readonly healthChecks?: readonly HealthCheck[];
}

/** One part of a node's health beyond its root supervisor: answers at once (no I/O), from what the part already knows. */
export interface HealthCheck {
  readonly name: string;
  problems(): readonly string[];
}

export const MAX_HEALTH_CHECKS = 32;
/** Problems reported per check, and characters per problem: the health answer stays small. */
const MAX_PROBLEMS_PER_CHECK = 16;
const MAX_PROBLEM_LENGTH = 300;

interface AdminSettings {
  readonly healthChecks: readonly HealthCheck[];
  readonly system: ActorSystem;
  readonly root: Ref | undefined;
  readonly providers: ReadonlyMap<string, SnapshotProvider>;
  readonly maxSnapshotBytes: number;
  readonly callTimeoutMs: number;
  readonly snapshotTimeoutMs: number;
  readonly name: string;
}

/** `starting`: no root attached yet; `draining`: the node is shutting down. */
export type AdminPhase = 'starting' | 'running' | 'draining';

export interface HealthReport {
  /** `ok` only while running with the root supervisor alive and no health check reporting a problem (`degraded` then). */
  readonly status: 'ok' | 'degraded' | 'starting' | 'draining' | 'down';
  /** What the health checks reported, by check (present only when one did). */
  readonly problems?: readonly { readonly check: string; readonly problem: string }[];
  readonly node: string;
  readonly root: string | null;
  readonly rootAlive: boolean;
  /** Live actors on the node. */
  readonly actors: number;
  readonly uptimeMs: number;
}

export type AdminRequest = { readonly op: 'tree' } | { readonly op: 'processes' } | { readonly op: 'health' };
export type AdminCast = { readonly op: 'attachRoot'; readonly root: Ref } | { readonly op: 'drain' };
/** Replies carry errors as values so that the caller, not the admin actor, throws them. */
export type AdminReply = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: Error };

/** A finished tree walk, handed back to the actor so that only its own handler replies and counts. */
class SnapshotDone {
  constructor(
    readonly from: From<AdminReply>,
    readonly reply: AdminReply,
  ) {}
}

/**
 * The admin actor: answers snapshots of the live tree, the process list and health, reading the
 * node only through public APIs (`Supervisor.status`, `ActorSystem.info` / `processes`, snapshot
 * providers). A tree walk waits on supervisors, so it runs beside the actor and replies later:
 * health stays answerable while a slow supervisor is being asked for its status.
 */
export class AdminServer extends GenServer<AdminRequest, AdminReply, AdminCast, SnapshotDone> {
  #root: Ref | undefined;
  #phase: AdminPhase;
  #inFlight = 0;
  readonly #startedAt = Date.now();

  constructor(readonly settings: AdminSettings) {
    super();
    this.#root = settings.root;
    this.#phase = settings.root === undefined ? 'starting' : 'running';
  }

  override handleCall(request: AdminRequest, from: From<AdminReply>): AdminReply | NoReply {
    switch (request.op) {
      case 'tree':
        return this.#tree(from);
      case 'processes':
        return this.#guard(() => capped(takeProcessSnapshot(this.settings.system, this.settings.maxSnapshotBytes), this.settings.maxSnapshotBytes));
      case 'health':
        return this.#guard(() => this.#health());
      default: {
        const unknown: never = request;
        return { ok: false, error: new SnapshotFailed(`unknown admin request ${JSON.stringify(unknown)}`) };
      }
    }
  }

  override handleCast(message: AdminCast): void {
    switch (message.op) {
      case 'attachRoot':
        this.#root = message.root;
        if (this.#phase === 'starting') this.#phase = 'running';
        return;
      case 'drain':
        this.#phase = 'draining';
        return;
      default: {
        const unknown: never = message;
        throw new Error(`unknown admin cast ${JSON.stringify(unknown)}`);
      }
    }
  }

  override handleInfo(message: SnapshotDone | ExitMessage | DownMessage): void {
    if (message instanceof SnapshotDone) {
      this.#inFlight--;
      GenServer.reply(message.from, message.reply);
    }
  }

  #tree(from: From<AdminReply>): AdminReply | NoReply {
    if (this.#inFlight >= MAX_CONCURRENT_SNAPSHOTS) return { ok: false, error: new AdminBusy(MAX_CONCURRENT_SNAPSHOTS) };
    this.#inFlight++;
    const { settings } = this;
    const runtime = this.ctx.system;
    const self = this.self;
    takeTreeSnapshot({
      runtime,
      root: this.#root,
      providers: settings.providers,
      maxBytes: settings.maxSnapshotBytes,
      callTimeoutMs: settings.callTimeoutMs,
      timeoutMs: settings.snapshotTimeoutMs,
    })
      .then(
        (snapshot): AdminReply => ({ ok: true, value: capped(snapshot, settings.maxSnapshotBytes) }),
        (error: unknown): AdminReply => ({ ok: false, error: new SnapshotFailed('tree walk failed', error) }),
      )
      .then((reply) => {
        try {
          // To a dead admin (the node stopped meanwhile) this send is a no-op, as any send to a dead ref.
          runtime.send(self, new SnapshotDone(from, reply));
        } catch {
          // The mailbox refused it (full): the actor will never see it, so answer and count here.
          this.#inFlight--;
          GenServer.reply(from, reply);
        }
      });
    return NO_REPLY;
  }

  #health(): HealthReport {
    const root = this.#root;
    const rootAlive = root !== undefined && this.ctx.system.isAlive(root);
    let status: HealthReport['status'];
    if (this.#phase === 'starting') status = 'starting';
    else if (this.#phase === 'draining') status = rootAlive ? 'draining' : 'down';
    else status = rootAlive ? 'ok' : 'down';
    const problems = this.#problems();
    if (status === 'ok' && problems.length > 0) status = 'degraded';
    return {
      status,
      ...(problems.length > 0 ? { problems } : {}),
      node: this.settings.system.node,
      root: root === undefined ? null : String(root),
      rootAlive,
      actors: this.settings.system.actorCount,
      uptimeMs: Date.now() - this.#startedAt,
    };
  }

  #problems(): { check: string; problem: string }[] {
    const out: { check: string; problem: string }[] = [];
    for (const check of this.settings.healthChecks) {
      let problems: readonly string[];
      try {
        problems = check.problems();
      } catch (error) {
        // A check that throws is itself a problem, not a crashed admin.
        problems = [`health check failed: ${error instanceof Error ? error.message : String(error)}`];
      }
      for (const problem of problems.slice(0, MAX_PROBLEMS_PER_CHECK)) out.push({ check: check.name, problem: String(problem).slice(0, MAX_PROBLEM_LENGTH) });
    }
    return out;
  }

  #guard(answer: () => unknown): AdminReply {
    try {
      return { ok: true, value: answer() };
    } catch (error) {
      return { ok: false, error: new SnapshotFailed('could not answer', error) };
    }
  }
}

/**
 * The budget estimates; this checks. A snapshot still over the cap (it cannot be by more than the
 * estimate's slack) loses its body and keeps its envelope, flagged truncated.
 */
function capped<T extends TreeSnapshot | ProcessSnapshot>(snapshot: T, maxBytes: number): T {
  if (jsonBytes(snapshot) <= maxBytes) return snapshot;
  if ('processes' in snapshot) return { ...snapshot, processes: [], truncated: true };
  return { ...snapshot, root: snapshot.root === null ? null : { ...snapshot.root, children: [] }, sections: {}, truncated: true };
}

function resolveAdminOptions(options: AdminOptions): AdminSettings {
  const maxSnapshotBytes = options.maxSnapshotBytes ?? MAX_SNAPSHOT_BYTES;
  checkInteger('maxSnapshotBytes', maxSnapshotBytes, MIN_SNAPSHOT_BYTES, MAX_SNAPSHOT_BYTES);
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_SNAPSHOT_CALL_TIMEOUT_MS;
  checkInteger('callTimeoutMs', callTimeoutMs, 1, MAX_SNAPSHOT_TIMEOUT_MS);
  const snapshotTimeoutMs = options.snapshotTimeoutMs ?? DEFAULT_SNAPSHOT_TIMEOUT_MS;
  checkInteger('snapshotTimeoutMs', snapshotTimeoutMs, 1, MAX_SNAPSHOT_TIMEOUT_MS);
  const name = options.name ?? ADMIN_NAME;
  if (typeof name !== 'string' || name.length === 0) throw new AdminInvalidOption('name', 'must be a non-empty string');
  const providers = new Map<string, SnapshotProvider>();
  for (const provider of options.providers ?? []) {
    if (typeof provider?.behaviour !== 'string' || provider.behaviour.length === 0) {
      throw new AdminInvalidOption('snapshotProviders', 'each provider needs a behaviour name');
    }
    if (typeof provider.section !== 'string' || provider.section.length === 0) {
      throw new AdminInvalidOption('snapshotProviders', `provider for ${provider.behaviour} needs a section name`);
    }
    if (typeof provider.describe !== 'function') {
      throw new AdminInvalidOption('snapshotProviders', `provider for ${provider.behaviour} needs a describe function`);
    }
    if (providers.has(provider.behaviour)) {
      throw new AdminInvalidOption('snapshotProviders', `two providers for behaviour ${provider.behaviour}`);
    }
    providers.set(provider.behaviour, provider);
  }
  const healthChecks = options.healthChecks ?? [];
  if (!Array.isArray(healthChecks) || healthChecks.length > MAX_HEALTH_CHECKS) throw new AdminInvalidOption('healthChecks', `must be an array of at most ${MAX_HEALTH_CHECKS} checks`);
  for (const check of healthChecks) {
    if (typeof check?.name !== 'string' || check.name.length === 0 || typeof check.problems !== 'function') {
      throw new AdminInvalidOption('healthChecks', 'each check needs a name and a problems() function');
    }
  }
  return { system: options.system, root: options.root, providers, maxSnapshotBytes, callTimeoutMs, snapshotTimeoutMs, name, healthChecks };
}

export function checkInteger(option: string, value: number, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new AdminInvalidOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  }
}

/** The admin actor's API: every operation is a message to it. */
export const Admin = {
  /** Starts the admin actor, registered under `options.name` (default `admin`). */
  async start(options: AdminOptions): Promise<ServerRef<AdminServer>> {
    const settings = resolveAdminOptions(options);
    return GenServer.start(settings.system, () => new AdminServer(settings), { name: settings.name });
  },

  /** A JSON snapshot of the live supervision tree, at most 1 MiB. */
  tree(runtime: ActorRuntime, admin: Ref | string = ADMIN_NAME, timeoutMs = DEFAULT_TREE_CALL_TIMEOUT_MS): Promise<TreeSnapshot> {
    return ask(runtime, admin, { op: 'tree' }, timeoutMs);
  },

  /** Every live process (oldest first), at most 1 MiB. */
  processes(runtime: ActorRuntime, admin: Ref | string = ADMIN_NAME, timeoutMs?: number): Promise<ProcessSnapshot> {
    return ask(runtime, admin, { op: 'processes' }, timeoutMs);
  },

  health(runtime: ActorRuntime, admin: Ref | string = ADMIN_NAME, timeoutMs?: number): Promise<HealthReport> {
    return ask(runtime, admin, { op: 'health' }, timeoutMs);
  },

  /** Tells the admin which supervisor is the node's root (startNode does, once the root has started). */
  attachRoot(runtime: ActorRuntime, admin: Ref | string, root: Ref): void {
    GenServer.cast<AdminServer>(runtime, admin, { op: 'attachRoot', root });
  },

  /** Marks the node as shutting down: health answers `draining` from now on. */
  drain(runtime: ActorRuntime, admin: Ref | string = ADMIN_NAME): void {
    GenServer.cast<AdminServer>(runtime, admin, { op: 'drain' });
  },

  stop(runtime: ActorRuntime, admin: Ref | string = ADMIN_NAME): Promise<unknown> {
    return GenServer.stop(runtime, admin, 'shutdown');
  },
};

const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([ActorErrorCode.NoProc, ActorErrorCode.CalleeExited, ActorErrorCode.CallTimeout, ActorErrorCode.SystemStopped]);

async function ask<T>(runtime: ActorRuntime, admin: Ref | string, request: AdminRequest, timeoutMs: number | undefined): Promise<T> {
  let reply: AdminReply;
  try {
    reply = await GenServer.call<AdminServer>(runtime, admin, request, timeoutMs);
  } catch (error) {
    if (error instanceof MoloError && UNAVAILABLE_CODES.has(error.code)) throw new AdminUnavailable(error.message, error);
    throw error;
  }
  if (!reply.ok) throw reply.error;
  return reply.value as T;
}

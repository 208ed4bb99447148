/**
 * Remote spawn: a node asks another node's net kernel to spawn a behaviour module there (on its
 * loop, in a thread or in a process), optionally as a child of a supervisor registered on that
 * node. The module is imported by the node that runs it, so its URL must resolve there. A node
 * serves remote spawns only when `remoteSpawn` allows the module (off by default: an
 * authenticated peer could otherwise run any module this node can import); a list allows the files
 * inside its directories, checked on their real paths (spawn-allow-list.ts).
 */
import type { ActorRuntime } from '../actors/behaviour.js';
import { checkBehaviourModule } from '../actors/placement/behaviour-module.js';
import type { BehaviourModule, Placement } from '../actors/placement/types.js';
import type { Ref } from '../actors/ref.js';
import type { RestartType } from '../behaviours/child-spec.js';
import { Supervisor } from '../behaviours/supervisor.js';
import { InvalidNodeOption, RemoteSpawnRefused } from './errors.js';
import { allowedModuleUrl } from './spawn-allow-list.js';

/** Options of `node.spawn` on another node. */
export interface RemoteSpawnOptions {
  readonly placement?: Placement;
  /** Registers the actor under this name on that node. */
  readonly name?: string;
  readonly trapExit?: boolean;
  /** Starts it as a child of the supervisor registered under this name on that node. */
  readonly supervisor?: string;
  /** The child's id under `supervisor`; default `remote-<n>`. */
  readonly id?: string;
  /** The child's restart type under `supervisor`; default `permanent`. */
  readonly restart?: RestartType;
}

/**
 * Which modules a node spawns for its peers: none (default), any, or the files inside these
 * directories (`file:` URLs or absolute paths; symlinks are followed before the check).
 */
export type RemoteSpawnPolicy = boolean | readonly string[];

/** What travels: [moduleUrl, exportName, args, options]. */
export type SpawnRequest = readonly ['spawn', string, string, readonly unknown[], RemoteSpawnOptions];

export function spawnRequest(module: BehaviourModule, options: RemoteSpawnOptions): SpawnRequest {
  checkBehaviourModule(module);
  return ['spawn', module.moduleUrl, module.exportName, module.args, { ...options }];
}

function checkOptions(value: unknown): RemoteSpawnOptions {
  if (typeof value !== 'object' || value === null) throw new InvalidNodeOption('spawn', 'options must be an object');
  const options = value as Record<string, unknown>;
  for (const key of ['name', 'supervisor', 'id', 'restart', 'placement'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') throw new InvalidNodeOption(`spawn.${key}`, 'must be a string');
  }
  if (options.trapExit !== undefined && typeof options.trapExit !== 'boolean') throw new InvalidNodeOption('spawn.trapExit', 'must be a boolean');
  return options as RemoteSpawnOptions;
}

let nextChild = 0;

/** Serves a spawn request from a peer: resolves with the new actor's ref. */
export async function serveSpawn(system: ActorRuntime, policy: RemoteSpawnPolicy, request: readonly unknown[]): Promise<Ref | undefined> {
  const [, moduleUrl, exportName, args, rawOptions] = request;
  const asked: BehaviourModule = { moduleUrl: moduleUrl as string, exportName: exportName as string, args: (args ?? []) as unknown[] };
  checkBehaviourModule(asked);
  if (policy === false) throw new RemoteSpawnRefused('disabled', asked.moduleUrl, 'this node does not spawn for peers (remoteSpawn is off)');
  // With a list, what is imported is the checked real path, not the URL as sent.
  const module = policy === true ? asked : { ...asked, moduleUrl: await allowedModuleUrl(policy, asked.moduleUrl) };
  const options = checkOptions(rawOptions);
  const placed = { placement: options.placement, name: options.name, trapExit: options.trapExit };
  if (options.supervisor === undefined) return system.spawnPlaced(module, placed);
  return Supervisor.startChild(system, options.supervisor, {
    id: options.id ?? `remote-${++nextChild}`,
    restart: options.restart,
    start: ({ system: runtime, parent }) => runtime.spawnPlaced(module, { ...placed, link: parent }),
  });
}

/**
 * Introspection of a system's hosts, without loading the placement machinery (msgpackr, worker
 * threads) for programs that never place an actor.
 */
import type { ActorRuntime } from '../behaviour.js';
import type { Ref } from '../ref.js';
import type { HostPlacement } from './host-channel.js';
import type { RouterStats } from './router.js';

export type { RouterStats as PlacementStats } from './router.js';

/** A host as the main system sees it. */
export interface HostInfo {
  readonly creation: number;
  readonly placement: HostPlacement;
  /** The `host` option it was started for; undefined for a host of its own. */
  readonly name: string | undefined;
  /** The child's pid (process), or this process's pid (thread). */
  readonly pid: number | undefined;
  readonly threadId: number | undefined;
  readonly state: 'running' | 'stopping';
}

/** What the hub exposes here. */
export interface HostDirectory {
  hosts(): HostInfo[];
  terminate(creation: number, detail: unknown): Promise<boolean>;
  allExited(): Promise<void>;
  readonly stats: RouterStats;
}

const directories = new WeakMap<ActorRuntime, HostDirectory>();

/** @internal the hub of `system` registers itself on creation. */
export function registerHostDirectory(system: ActorRuntime, directory: HostDirectory): void {
  directories.set(system, directory);
}

/** The hosts `system` runs now (empty when it never placed an actor in a thread or process). */
export function placementHosts(system: ActorRuntime): HostInfo[] {
  return directories.get(system)?.hosts() ?? [];
}

/**
 * Resolves once every host `system` started has exited: after `system.shutdown()`, or once their
 * actors are gone and they stopped.
 */
export function hostsExited(system: ActorRuntime): Promise<void> {
  return directories.get(system)?.allExited() ?? Promise.resolve();
}

/**
 * Counters of `system`'s host channels (frames and bytes each way, drops, forged frames, hosts cut
 * off); undefined when it never placed an actor in a thread or process.
 */
export function placementStats(system: ActorRuntime): Readonly<RouterStats> | undefined {
  const stats = directories.get(system)?.stats;
  return stats === undefined ? undefined : { ...stats };
}

/**
 * Terminates the thread or process hosting `ref` now (worker.terminate(), SIGKILL), without asking
 * it: a host whose handler never yields (an endless CPU loop) never reads a stop frame. Every actor
 * of that host exits as for a host crash, with `{ shutdown: { thread_exit | process_exit, …,
 * terminated: detail } }`, so links, monitors and pending calls see who pulled the plug and why.
 * Resolves once the host has exited: true, or false when `ref` is not in a host of `system` (a
 * loop actor, or its host already gone). A fresh host is any later `spawnPlaced` without `host`:
 * each such spawn starts a host of its own.
 * @internal for the bus (task executors recycle a worker's host at its hard timeout).
 */
export function terminateHost(system: ActorRuntime, ref: Ref, detail: unknown = 'terminated'): Promise<boolean> {
  return directories.get(system)?.terminate(ref.creation, detail) ?? Promise.resolve(false);
}

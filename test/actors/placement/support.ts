import { afterEach, expect } from 'vitest';
import {
  behaviourModule,
  hostsExited,
  placementHosts,
  type ActorSystem,
  type ActorSystemOptions,
  type BehaviourModule,
  type PlacedSpawnOptions,
  type Ref,
} from '../../../src/actors/index.js';
import { atFileStart } from '../../support/file-hooks.js';
import { eventually, testSystem } from '../../support/systems.js';
import type { ProbeOptions, ProbeRequest } from './fixtures/probe.js';

export type HostPlacement = 'thread' | 'process';
export const HOST_PLACEMENTS: readonly HostPlacement[] = ['thread', 'process'];

export const probeModule = new URL('./fixtures/probe.ts', import.meta.url);
export const counterModule = new URL('./fixtures/counter.ts', import.meta.url);

/** Systems of the current test, and every host pid they started (checked dead after each test). */
const systems = new Set<ActorSystem>();
const hostPids = new Set<number>();
/** Whether the current test file called `checkPlacementLeaks`. */
let checking = false;
// This module is evaluated once per fork when files share its module cache: each file starts
// without the last one's leftovers (a failed check may have left some), and must ask for the check.
atFileStart(() => {
  systems.clear();
  hostPids.clear();
  checking = false;
});

function requireCheck(): void {
  if (!checking) throw new Error('call checkPlacementLeaks() at the top of the test file, after its imports');
}

/**
 * A test system for placement. After each test its hosts must have stopped by themselves (every
 * placed actor is gone by then), no child process it started may still run, and no worker thread
 * or child process handle may be left open (see `checkPlacementLeaks`, which the file must call).
 */
export function placementSystem(options: ActorSystemOptions = {}): ActorSystem {
  requireCheck();
  const system = testSystem({ node: 'placed', ...options });
  systems.add(system);
  return system;
}

/** Spawns a probe (see fixtures/probe.ts) and remembers its host's pid for the leak check. */
export async function spawnProbe(
  system: ActorSystem,
  placement: HostPlacement | 'loop',
  options: Omit<PlacedSpawnOptions, 'placement'> = {},
  probeOptions: ProbeOptions = {},
): Promise<Ref> {
  return spawnTracked(system, placement, behaviourModule(probeModule, 'probe', probeOptions), options);
}

/** Spawns any placed behaviour and remembers its host's pid for the leak check. */
export async function spawnTracked(
  system: ActorSystem,
  placement: HostPlacement | 'loop',
  spec: BehaviourModule,
  options: Omit<PlacedSpawnOptions, 'placement'> = {},
): Promise<Ref> {
  requireCheck();
  const ref = await system.spawnPlaced(spec, { ...options, placement });
  for (const host of placementHosts(system)) if (host.placement === 'process' && host.pid !== undefined) hostPids.add(host.pid);
  return ref;
}

/** A typed call to a probe. */
export function ask<T = unknown>(system: ActorSystem, ref: Ref | string, request: ProbeRequest, timeoutMs?: number): Promise<T> {
  return system.call<T>(ref, request, timeoutMs);
}

/** Stops `refs` (kill) and waits until each has exited. */
export async function killAll(system: ActorSystem, ...refs: Ref[]): Promise<void> {
  const exits = refs.map((ref) => system.exited(ref));
  for (const ref of refs) system.exit(ref, 'kill');
  await Promise.all(exits);
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Worker threads show as MessagePort, child processes as ProcessWrap (and their IPC pipe). */
const HOST_HANDLES = ['MessagePort', 'ProcessWrap', 'PipeWrap'];
const countHandles = (): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const resource of process.getActiveResourcesInfo()) {
    if (HOST_HANDLES.includes(resource)) counts.set(resource, (counts.get(resource) ?? 0) + 1);
  }
  return counts;
};

function openHostHandles(baseline: ReadonlyMap<string, number>): string[] {
  const open: string[] = [];
  for (const [resource, count] of countHandles()) {
    if (count > (baseline.get(resource) ?? 0)) open.push(`${resource} x${count - (baseline.get(resource) ?? 0)}`);
  }
  return open;
}

/**
 * The placement leak check, after each test of the calling file: the hosts of every
 * `placementSystem` must have stopped by themselves, every host process `spawnTracked` saw must
 * have exited, and no worker thread or child process handle may be open beyond those open now.
 * Call it at the top of the test file, after its imports (it registers an `afterEach` hook, which
 * a helper module cannot do for every file that imports it when files share its module cache).
 */
export function checkPlacementLeaks(): void {
  checking = true;
  const baseline = countHandles();
  afterEach(() => placementLeaks(baseline));
}

async function placementLeaks(baseline: ReadonlyMap<string, number>): Promise<void> {
  const problems: string[] = [];
  for (const system of systems) {
    try {
      // A host whose last actor exited stops by itself.
      await eventually(() => placementHosts(system).length === 0, 10_000, 'idle hosts to stop');
    } catch {
      problems.push(`hosts still running: ${JSON.stringify(placementHosts(system))}`);
    }
    system.shutdown();
    await hostsExited(system);
  }
  systems.clear();
  try {
    await eventually(() => [...hostPids].every((pid) => !pidAlive(pid)), 10_000, 'host processes to exit');
  } catch {
    problems.push(`host processes alive: ${[...hostPids].filter(pidAlive).join(', ')}`);
  }
  hostPids.clear();
  try {
    await eventually(() => openHostHandles(baseline).length === 0, 10_000, 'host handles to close');
  } catch {
    problems.push(`open handles: ${openHostHandles(baseline).join(', ')}`);
  }
  expect(problems, 'placement left hosts behind').toEqual([]);
}

import { afterAll, afterEach, beforeEach, expect } from 'vitest';
import { hostsExited, placementHosts } from '../../src/actors/index.js';
import { runAfterFile, runAfterTest, runFileStart } from './file-hooks.js';
import { liveSystems } from './systems.js';

/**
 * Leak check, after every test:
 * - every system made with `testSystem` holds no live actors, no armed timers and no placement
 *   hosts (worker threads or child processes hosting actors);
 * - no socket, server, child process or worker thread handle is left open that the test opened
 *   (counted from `process.getActiveResourcesInfo()` against the count before the test).
 * Leftovers fail the test and are then cleaned up, so the next test starts clean.
 *
 * This file is evaluated again before every test file, also where files share their fork's module
 * cache (`isolate: false`): its hooks are every file's. It also runs what helper modules registered
 * in file-hooks.ts (they are evaluated once per fork, so they cannot register hooks themselves).
 */
const WATCHED_HANDLES = ['TCPServerWrap', 'TCPSocketWrap', 'ProcessWrap', 'MessagePort'] as const;
/** Handles close asynchronously (a socket's close callback, a child's exit): give them this long. */
const HANDLE_GRACE_MS = 3_000;

function countHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const resource of process.getActiveResourcesInfo()) {
    if ((WATCHED_HANDLES as readonly string[]).includes(resource)) counts.set(resource, (counts.get(resource) ?? 0) + 1);
  }
  return counts;
}

function handlesAbove(baseline: Map<string, number>): string[] {
  const extra: string[] = [];
  for (const [resource, count] of countHandles()) {
    const before = baseline.get(resource) ?? 0;
    if (count > before) extra.push(`${count - before} ${resource}`);
  }
  return extra;
}

// Module state of the helpers imported by earlier files of this fork starts fresh for this one.
runFileStart();

let baseline = new Map<string, number>();

beforeEach(() => {
  baseline = countHandles();
});

afterEach(async () => {
  const leaks: string[] = [];
  for (const system of liveSystems) {
    await system.settle();
    if (system.actorCount > 0) {
      const names = system.processes().map((ref) => `${ref} (${system.info(ref)?.behaviour})`);
      leaks.push(`${system.actorCount} live actor(s) on '${system.node}': ${names.slice(0, 10).join(', ')}`);
    }
    if (system.timerCount > 0) leaks.push(`${system.timerCount} armed timer(s) on '${system.node}'`);
    // A host whose last actor exited stops by itself, a little later.
    const hostDeadline = Date.now() + HANDLE_GRACE_MS;
    while (placementHosts(system).length > 0 && Date.now() < hostDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const hosts = placementHosts(system);
    if (hosts.length > 0) leaks.push(`${hosts.length} placement host(s) still running on '${system.node}'`);
    system.shutdown();
    await hostsExited(system);
  }
  liveSystems.clear();
  const deadline = Date.now() + HANDLE_GRACE_MS;
  let open = handlesAbove(baseline);
  while (open.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    open = handlesAbove(baseline);
  }
  if (open.length > 0) leaks.push(`open handles the test did not close: ${open.join(', ')}`);
  expect(leaks, 'test left resources behind').toEqual([]);
});

// Registered after the leak check, so run before it (Vitest runs `afterEach` hooks last-registered
// first): the helpers' cleanups (nodes stopped, sockets destroyed…) come after the test file's own
// `afterEach` hooks, and before the leak check, as when each helper registered its own hook.
afterEach(() => runAfterTest());

// After the test file's own `afterAll` hooks: so that nothing reaches the next file of the fork,
// whatever a failing `afterEach` hook kept from being cleaned up (a fresh process per file used to
// drop it; that hook reported the failure, so errors here are not reported again); then the
// helpers' per-file cleanups.
afterAll(async () => {
  await runAfterTest().catch(() => undefined);
  for (const system of liveSystems) {
    system.shutdown();
    await hostsExited(system);
  }
  liveSystems.clear();
  await runAfterFile();
});

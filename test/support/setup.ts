import { afterEach, expect } from 'vitest';
import { liveSystems } from './systems.js';

/**
 * Leak check: after each test, every system made with `testSystem` must hold no live actors and
 * no armed timers. Leftovers fail the test (and are then cleaned up so the next test starts clean).
 */
afterEach(async () => {
  const leaks: string[] = [];
  for (const system of liveSystems) {
    await system.settle();
    if (system.actorCount > 0) {
      const names = system.processes().map((ref) => `${ref} (${system.info(ref)?.behaviour})`);
      leaks.push(`${system.actorCount} live actor(s) on '${system.node}': ${names.slice(0, 10).join(', ')}`);
    }
    if (system.timerCount > 0) leaks.push(`${system.timerCount} armed timer(s) on '${system.node}'`);
    system.shutdown();
  }
  liveSystems.clear();
  expect(leaks, 'test left resources behind').toEqual([]);
});

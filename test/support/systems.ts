import { ActorSystem, type ActorSystemOptions } from '../../src/actors/index.js';

/** Systems created by the current test; the leak check in setup.ts inspects and clears them. */
export const liveSystems = new Set<ActorSystem>();

/**
 * An ActorSystem the leak check watches: the test must leave no actors or timers behind. It logs
 * nothing unless given a logger (tests crash actors on purpose; the default would report each).
 */
export function testSystem(options: ActorSystemOptions = {}): ActorSystem {
  const system = new ActorSystem({ node: 'test', logger: false, ...options });
  liveSystems.add(system);
  return system;
}

/** Resolves after `ms` of real time. Prefer a SimulatedClock; use this only around real I/O. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** SIGKILLs each pid still alive (a failed run's leftovers), so the next test file does not find them. */
export function killLeftovers(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
}

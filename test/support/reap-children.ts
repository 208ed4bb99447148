import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';

/**
 * A set the caller adds its child processes to: after each test, every one still running is
 * SIGKILLed and awaited, so a failed test leaves no process behind. Registers a hook: call it from
 * a test file (a helper module registers `reapChildren` with file-hooks.ts's `afterEachTest`).
 */
export function reapChildrenAfterEach<C extends ChildProcess>(): Set<C> {
  const spawned = new Set<C>();
  afterEach(() => reapChildren(spawned));
  return spawned;
}

/** SIGKILLs and awaits every child of `spawned` still running, and empties the set. */
export async function reapChildren(spawned: Set<ChildProcess>): Promise<void> {
  for (const child of spawned) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('close', resolve));
    }
  }
  spawned.clear();
}

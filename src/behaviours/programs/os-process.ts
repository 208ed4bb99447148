/**
 * Programs and probes run in process groups of their own (src/actors/os/process-group.ts); this
 * counts the ones started here, for tests and admin.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnInGroup as spawnGroup, type GroupSpawnOptions } from '../../actors/os/process-group.js';

export { signalGroup } from '../../actors/os/process-group.js';

/** Programs and probes started here and not yet exited. */
let live = 0;

/** `spawnInGroup`, counted by liveProgramProcessCount until its exit. */
export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  const child = spawnGroup(command, args, options);
  if (child.pid !== undefined) {
    live += 1;
    child.once('exit', () => (live -= 1));
  }
  return child;
}

/** Group leaders started by program supervisors in this process and not yet exited (for tests and admin). */
export function liveProgramProcessCount(): number {
  return live;
}

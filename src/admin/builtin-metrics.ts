/**
 * `/metrics` of a node without telemetry: what the admin can sample from the system, in the same
 * names, labels and help texts as telemetry's `RuntimeMetrics`, so a dashboard works with either.
 */
import type { ProcessInfo, Ref } from '../actors/index.js';
import { METRIC_HELP } from '../telemetry/metrics.js';

/** What counting live actors needs: an `ActorSystem`, or anything listing processes the same way. */
export interface ProcessLister {
  processes(): readonly Ref[];
  info(ref: Ref): ProcessInfo | undefined;
  whereis(name: string): Ref | undefined;
}

export function builtinMetrics(system: ProcessLister, rootName: string): () => Promise<string> {
  return () => Promise.resolve(renderBuiltinMetrics(countAlive(system), system.whereis(rootName) !== undefined));
}

/** Live actors by behaviour, as `molo_actors_alive{behaviour}` counts them. */
export function countAlive(system: ProcessLister): Map<string, number> {
  const alive = new Map<string, number>();
  for (const ref of system.processes()) {
    const behaviour = system.info(ref)?.behaviour;
    if (behaviour !== undefined) alive.set(behaviour, (alive.get(behaviour) ?? 0) + 1);
  }
  return alive;
}

/** The built-in exposition: `molo_actors_alive{behaviour}` and the unlabelled `molo_root_supervisor_up`. */
export function renderBuiltinMetrics(alive: ReadonlyMap<string, number>, rootUp: boolean): string {
  const lines = ['# HELP molo_actors_alive ' + METRIC_HELP.actorsAlive, '# TYPE molo_actors_alive gauge'];
  for (const [behaviour, count] of alive) lines.push(`molo_actors_alive{behaviour="${escapeLabel(behaviour)}"} ${count}`);
  lines.push('# HELP molo_root_supervisor_up ' + METRIC_HELP.rootSupervisorUp, '# TYPE molo_root_supervisor_up gauge', `molo_root_supervisor_up ${rootUp ? 1 : 0}`, '');
  return lines.join('\n');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

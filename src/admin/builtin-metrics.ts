/**
 * `/metrics` of a node without telemetry: what the admin can sample from the system, in the same
 * names, labels and help texts as telemetry's `RuntimeMetrics`, so a dashboard works with either.
 */
import type { ActorSystem } from '../actors/index.js';
import { METRIC_HELP } from '../telemetry/metrics.js';
import type { MetricsSource } from './http.js';

export function builtinMetrics(system: ActorSystem, rootName: string): MetricsSource {
  return () => {
    const alive = new Map<string, number>();
    for (const ref of system.processes()) {
      const behaviour = system.info(ref)?.behaviour;
      if (behaviour !== undefined) alive.set(behaviour, (alive.get(behaviour) ?? 0) + 1);
    }
    const lines = ['# HELP molo_actors_alive ' + METRIC_HELP.actorsAlive, '# TYPE molo_actors_alive gauge'];
    for (const [behaviour, count] of alive) lines.push(`molo_actors_alive{behaviour="${escapeLabel(behaviour)}"} ${count}`);
    lines.push(
      '# HELP molo_root_supervisor_up ' + METRIC_HELP.rootSupervisorUp,
      '# TYPE molo_root_supervisor_up gauge',
      `molo_root_supervisor_up ${system.whereis(rootName) === undefined ? 0 : 1}`,
      '',
    );
    return Promise.resolve(lines.join('\n'));
  };
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

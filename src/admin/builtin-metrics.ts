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

/** Live actors of one behaviour, and their mailboxes, as one scrape samples them. */
export interface BehaviourSample {
  alive: number;
  queued: number;
  deepest: number;
}

export function builtinMetrics(system: ProcessLister, rootName: string): () => Promise<string> {
  return () => Promise.resolve(renderBuiltinMetrics(sampleActors(system), system.whereis(rootName) !== undefined));
}

/** Live actors by behaviour, as `molo_actors_alive{behaviour}` counts them. */
export function countAlive(system: ProcessLister): Map<string, number> {
  return new Map([...sampleActors(system)].map(([behaviour, sample]) => [behaviour, sample.alive]));
}

/** Live actors, queued messages and the deepest mailbox, by behaviour. */
export function sampleActors(system: ProcessLister): Map<string, BehaviourSample> {
  const samples = new Map<string, BehaviourSample>();
  for (const ref of system.processes()) {
    const info = system.info(ref);
    if (info === undefined) continue;
    let sample = samples.get(info.behaviour);
    if (sample === undefined) samples.set(info.behaviour, (sample = { alive: 0, queued: 0, deepest: 0 }));
    sample.alive++;
    sample.queued += info.mailboxLength;
    if (info.mailboxLength > sample.deepest) sample.deepest = info.mailboxLength;
  }
  return samples;
}

/**
 * The built-in exposition: `molo_actors_alive{behaviour}`, the unlabelled `molo_root_supervisor_up`
 * and, when the sample has mailboxes, `molo_mailbox_messages{behaviour}` and `molo_mailbox_depth_max{behaviour}`.
 */
export function renderBuiltinMetrics(actors: ReadonlyMap<string, number | BehaviourSample>, rootUp: boolean): string {
  const lines = ['# HELP molo_actors_alive ' + METRIC_HELP.actorsAlive, '# TYPE molo_actors_alive gauge'];
  const samples: [string, BehaviourSample][] = [];
  for (const [behaviour, entry] of actors) {
    lines.push(`molo_actors_alive{behaviour="${escapeLabel(behaviour)}"} ${typeof entry === 'number' ? entry : entry.alive}`);
    if (typeof entry !== 'number') samples.push([behaviour, entry]);
  }
  lines.push('# HELP molo_root_supervisor_up ' + METRIC_HELP.rootSupervisorUp, '# TYPE molo_root_supervisor_up gauge', `molo_root_supervisor_up ${rootUp ? 1 : 0}`);
  if (samples.length > 0) {
    lines.push('# HELP molo_mailbox_messages ' + METRIC_HELP.mailboxMessages, '# TYPE molo_mailbox_messages gauge');
    for (const [behaviour, sample] of samples) lines.push(`molo_mailbox_messages{behaviour="${escapeLabel(behaviour)}"} ${sample.queued}`);
    lines.push('# HELP molo_mailbox_depth_max ' + METRIC_HELP.mailboxDepthMax, '# TYPE molo_mailbox_depth_max gauge');
    for (const [behaviour, sample] of samples) lines.push(`molo_mailbox_depth_max{behaviour="${escapeLabel(behaviour)}"} ${sample.deepest}`);
  }
  lines.push('');
  return lines.join('\n');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

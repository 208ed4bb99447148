/**
 * A ref rebuilt from its parts to an actor placed in a thread or a process behaves as the ref
 * `spawnPlaced` returned: send, call, isAlive, watch, exit (kill), monitor, demonitor, link, unlink.
 */
import { describe, expect, it } from 'vitest';
import { formatReason, parseRef, Ref, type ActorSystem } from '../../../src/actors/index.js';
import { eventually } from '../../support/systems.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, placementSystem, spawnProbe, type HostPlacement } from './support.js';
import { recordingAgent, type RecordingAgent } from '../../support/recording-agent.js';

checkPlacementLeaks();

type View = (ref: Ref) => Ref;
const views: [string, View][] = [
  ['the original', (ref) => ref],
  ['rebuilt with new Ref', (ref) => new Ref(ref.node, ref.id, ref.creation)],
  ['rebuilt by parseRef from JSON', (ref) => parseRef(JSON.parse(JSON.stringify(ref)) as string)],
];

/** DOWN and EXIT as text without refs: a placed actor's are its own at each run. */
const agent = (system: ActorSystem): Promise<RecordingAgent> => recordingAgent(system, { refs: false });

async function probe(system: ActorSystem, placement: HostPlacement, view: View): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const placed = await spawnProbe(system, placement);
  const p = view(placed);
  out.call = await ask(system, p, 'ping');
  system.send(p, 'hello');
  out.log = await ask(system, p, 'log');
  out.alive = system.isAlive(p);

  const local = await agent(system);
  local.ctx.demonitor(local.ctx.monitor(p));
  local.ctx.monitor(p);
  local.ctx.link(p);
  local.ctx.unlink(p);
  out.unlinked = system.info(local.ref)?.links.length;
  local.ctx.link(p);
  out.linked = system.info(local.ref)?.links.length;
  // A call after the link and monitor frames: they reach the host before the kill does.
  await ask(system, p, 'ping');
  const watched: string[] = [];
  system.watch(p, (reason) => watched.push(formatReason(reason)));
  const exited = system.exited(p);
  system.exit(p, 'kill');
  out.exited = formatReason(await exited);
  await eventually(() => local.seen.length >= 2, 10_000, 'EXIT and DOWN');
  // Anything more (a DOWN from the dropped monitor) would come before a round trip to a new actor.
  const other = await spawnProbe(system, placement);
  await ask(system, other, 'ping');
  out.seen = [...local.seen].sort();
  out.watched = watched;
  out.aliveAfterKill = system.isAlive(p);
  out.linksAfterKill = system.info(local.ref)?.links.length;
  system.exit(other, 'kill');
  system.exit(local.ref, 'kill');
  await system.exited(other);
  return out;
}

describe.each(HOST_PLACEMENTS)('a rebuilt ref to an actor placed in a %s', (placement) => {
  it('behaves as the ref spawnPlaced returned, for every operation', async () => {
    const system = placementSystem();
    const results: Record<string, Record<string, unknown>> = {};
    for (const [name, view] of views) results[name] = await probe(system, placement, view);
    const original = results['the original']!;
    expect(original).toEqual({
      call: 'pong',
      log: ['hello'],
      alive: true,
      unlinked: 0,
      linked: 1,
      exited: 'killed',
      seen: ['DOWN killed', 'EXIT killed'],
      watched: ['killed'],
      aliveAfterKill: false,
      linksAfterKill: 0,
    });
    expect(results).toEqual(Object.fromEntries(views.map(([name]) => [name, original])));
  }, 30_000);
});

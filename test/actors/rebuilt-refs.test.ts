/**
 * One identity, one behaviour: a ref rebuilt from its parts (node, id, creation), after a JSON
 * round trip or with the public constructor, works with every kernel operation exactly as the
 * ref `spawn` returned does, as Erlang pids compare by value.
 */
import { describe, expect, it } from 'vitest';
import { ActorSystem, formatReason, parseRef, Ref, type ExitReason } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { recordingAgent, type RecordingAgent } from '../support/recording-agent.js';

type View = (ref: Ref) => Ref;

const views: [string, View][] = [
  ['the original', (ref) => ref],
  ['a ref rebuilt with new Ref(node, id, creation)', (ref) => new Ref(ref.node, ref.id, ref.creation)],
  ['a ref rebuilt by parseRef after a JSON round trip', (ref) => parseRef(JSON.parse(JSON.stringify(ref)) as string)],
];

const agent = (system: ActorSystem, trapExit = true): Promise<RecordingAgent> => recordingAgent(system, { trapExit });

/** What an operation gave, or the code of the error it threw. */
function attempt<T>(operation: () => T): T | string {
  try {
    return operation();
  } catch (error) {
    return `throws ${String((error as { code?: unknown }).code)}`;
  }
}

const text = (reason: ExitReason): string => formatReason(reason);
const links = (system: ActorSystem, ref: Ref): string[] => (system.info(ref)?.links ?? []).map(String).sort();

/** Every ref operation on `view(target)`; what each gave, as plain data (refs as text). */
async function probe(system: ActorSystem, view: View): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};

  // send, call, isAlive, info, register and whereis
  const echo = await agent(system);
  const e = view(echo.ref);
  system.send(e, 'hello');
  out.call = await system.call(e, 'ping', 2_000).catch((error: { code?: unknown }) => `rejects ${String(error.code)}`);
  await system.settle();
  out.sent = [...echo.seen];
  out.alive = system.isAlive(e);
  out.info = system.info(e)?.ref.equals(echo.ref);
  out.register = attempt(() => system.register('probe-echo', e));
  out.whereis = system.whereis('probe-echo')?.equals(e);
  out.unregister = system.unregister('probe-echo');

  // watch and exited: they fire at the real exit, with its reason
  const watched: string[] = [];
  system.watch(e, (reason, ref) => watched.push(`${String(ref)} ${text(reason)}`));
  const exited = system.exited(e);
  out.watchedBeforeExit = [...watched];
  system.exit(e, 'kill');
  out.aliveAfterKill = system.isAlive(e);
  out.watched = watched.map((line) => line.replace(String(echo.ref), 'TARGET'));
  out.exited = text(await exited);

  // exit with a trappable reason: a trapping target gets EXIT, then shutdown ends a non-trapping one
  const trapping = await agent(system);
  system.exit(view(trapping.ref), 'shutdown');
  await system.settle();
  out.trappedExit = trapping.seen.map((line) => line.replace(String(system.outside), 'OUTSIDE'));
  const plain = await agent(system, false);
  system.exit(view(plain.ref), 'shutdown');
  out.plainAfterShutdown = system.isAlive(plain.ref);

  // an actor's exit(self-by-parts, 'normal') ends it, as exit(self(), normal) does in OTP
  const self = await agent(system, false);
  self.ctx.exit(view(self.ref), 'normal');
  out.selfNormalExit = system.isAlive(self.ref);

  // monitor, demonitor
  const watcher = await agent(system);
  const target = await agent(system, false);
  const t = view(target.ref);
  const dropped = watcher.ctx.monitor(t);
  out.monitorsWhileHeld = system.info(target.ref)?.monitoredBy.length;
  watcher.ctx.demonitor(dropped);
  out.monitorsAfterDemonitor = system.info(target.ref)?.monitoredBy.length;
  watcher.ctx.monitor(t);

  // link, unlink (both sides' link sets), link again, then the target crashes
  watcher.ctx.link(t);
  out.linked = [links(system, watcher.ref).length, links(system, target.ref).length];
  watcher.ctx.unlink(t);
  out.unlinked = [links(system, watcher.ref).length, links(system, target.ref).length];
  watcher.ctx.link(t);
  system.exit(t, new Error('boom'));
  await system.settle();
  out.afterCrash = watcher.seen.map((line) => line.replace(String(target.ref), 'TARGET'));
  out.linksAfterCrash = links(system, watcher.ref).length;

  // spawn linked to a rebuilt ref
  const parent = await agent(system);
  const child = attempt(() => system.spawn(() => {}, { link: view(parent.ref) }));
  out.spawnLinked = typeof child === 'string' ? child : links(system, parent.ref).includes(String(child));
  if (typeof child !== 'string') {
    system.exit(child, 'kill');
    await system.settle();
    out.parentSawChild = parent.seen.map((line) => line.replace(String(child), 'CHILD'));
  }

  for (const ref of [echo.ref, trapping.ref, plain.ref, self.ref, watcher.ref, target.ref, parent.ref]) system.exit(ref, 'kill');
  await system.settle();
  return out;
}

describe('a ref rebuilt from its parts behaves as the original', () => {
  it('every kernel operation gives the same result on the original and on rebuilt refs', async () => {
    const results: Record<string, Record<string, unknown>> = {};
    for (const [name, view] of views) {
      const system = testSystem({ node: 'n@127.0.0.1:1', creation: 7 });
      results[name] = await probe(system, view);
      expect(system.actorCount).toBe(0);
    }
    const original = results['the original']!;
    // The original behaves as documented, so the comparison is worth something.
    expect(original).toMatchObject({
      call: 'ping',
      sent: ['hello'],
      alive: true,
      whereis: true,
      watchedBeforeExit: [],
      aliveAfterKill: false,
      watched: ['TARGET killed'],
      exited: 'killed',
      trappedExit: ['EXIT OUTSIDE shutdown'],
      plainAfterShutdown: false,
      selfNormalExit: false,
      monitorsWhileHeld: 1,
      monitorsAfterDemonitor: 0,
      linked: [1, 1],
      unlinked: [0, 0],
      afterCrash: ['EXIT TARGET Error: boom', 'DOWN TARGET Error: boom'],
      linksAfterCrash: 0,
      spawnLinked: true,
      parentSawChild: ['EXIT CHILD killed'],
    });
    for (const [name] of views) expect(results[name], name).toEqual(original);
  });

  it('parseRef reads what toString and toJSON write, node names with dots and colons included', () => {
    const ref = new Ref('a@127.0.0.1:4000', 12, 3_000_000_000);
    expect(parseRef(String(ref)).equals(ref)).toBe(true);
    expect(parseRef(JSON.parse(JSON.stringify({ ref })).ref as string).equals(ref)).toBe(true);
    for (const bad of ['', '<>', 'a.1.2', '<a.1>', '<a.x.2>', '<a.1.-2>', '<.1.2>', '<a.1.2', `<a.${2 ** 60}.1>`, '<a.01.1>']) {
      expect(() => parseRef(bad), bad).toThrow(expect.objectContaining({ code: 'ACTOR_INVALID_REF' }));
    }
  });
});

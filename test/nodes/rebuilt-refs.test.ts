/**
 * Over a node link, a ref rebuilt from its parts (one that never crossed the link: it came through
 * JSON, a database row, a URL) reaches the remote actor exactly as the ref the link carried does:
 * send, call, exit, isAlive, watch, monitor, demonitor, link, unlink; and a flood of sends to it is
 * delivered, not dropped as unknown actors.
 */
import { describe, expect, it } from 'vitest';
import { formatReason, parseRef, Ref, type ActorSystem } from '../../src/actors/index.js';
import type { Node } from '../../src/nodes/index.js';
import { testNode } from './support.js';
import { recordingAgent, type RecordingAgent } from '../support/recording-agent.js';

/** How the probing node `a` comes to hold a ref to an actor of node `b`. */
type View = (a: Node, b: Node, ref: Ref) => Promise<Ref>;

let names = 0;
const views: [string, View][] = [
  [
    'the ref the link carried (whereis)',
    async (a, b, ref) => {
      const name = `probe-${++names}`;
      b.system.register(name, ref);
      const carried = (await a.whereis(name, b.name))!;
      b.system.unregister(name);
      return carried;
    },
  ],
  ['a ref rebuilt with new Ref(node, id, creation)', async (_a, _b, ref) => new Ref(ref.node, ref.id, ref.creation)],
  ['a ref rebuilt by parseRef after a JSON round trip', async (_a, _b, ref) => parseRef(JSON.parse(JSON.stringify(ref)) as string)],
  [
    'a rebuilt ref while the carried one is held too (frames decode to the carried object)',
    async (a, b, ref) => {
      held.push(await views[0]![1](a, b, ref));
      return new Ref(ref.node, ref.id, ref.creation);
    },
  ],
];
/** Carried refs kept alive, so that node a's table keeps decoding to them. */
const held: Ref[] = [];

/** Polls `check` until true or `timeoutMs` passes; says which (a probe records a miss, it does not throw). */
async function within(check: () => boolean, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

const agent = (system: ActorSystem, trapExit = true): Promise<RecordingAgent> => recordingAgent(system, { trapExit });

const linkCount = (system: ActorSystem, ref: Ref): number => system.info(ref)?.links.length ?? -1;

/** Every ref operation from node `a` on `b`'s actors through `view`; what each gave, as plain data. */
async function probe(a: Node, b: Node, view: View): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const as = a.system;
  const bs = b.system;
  const cleanup: Ref[] = [];

  // send, call, isAlive
  const echo = await agent(bs);
  cleanup.push(echo.ref);
  const e = await view(a, b, echo.ref);
  as.send(e, 'hello');
  out.call = await as.call(e, 'ping', 3_000).catch((error: { code?: unknown }) => `rejects ${String(error.code)}`);
  out.sent = (await within(() => echo.seen.length > 0)) ? [...echo.seen] : [];
  out.alive = as.isAlive(e);

  // watch, exited and exit(kill): the watch fires at the real exit, with its reason
  const watched: string[] = [];
  as.watch(e, (reason) => watched.push(formatReason(reason)));
  const exited = as.exited(e);
  out.watchedBeforeExit = [...watched];
  as.exit(e, 'kill');
  out.killed = await within(() => !bs.isAlive(echo.ref));
  out.exited = await Promise.race([exited.then(formatReason), new Promise((resolve) => setTimeout(resolve, 3_000, 'never'))]);
  out.watched = [...watched];
  out.aliveAfterKill = as.isAlive(e);

  // a trappable exit signal: a trapping actor gets EXIT from the sender's node
  const trapping = await agent(bs);
  cleanup.push(trapping.ref);
  as.exit(await view(a, b, trapping.ref), 'shutdown');
  out.trappedExit = (await within(() => trapping.seen.length > 0)) ? trapping.seen.map((line) => line.replace(String(as.outside), 'OUTSIDE')) : [];

  // monitor, demonitor, monitor again; link, unlink, link again; then the target crashes
  const watcher = await agent(as);
  const target = await agent(bs, false);
  cleanup.push(watcher.ref, target.ref);
  const t = await view(a, b, target.ref);
  watcher.ctx.demonitor(watcher.ctx.monitor(t));
  watcher.ctx.monitor(t);
  watcher.ctx.link(t);
  out.linked = await within(() => linkCount(bs, target.ref) === 1 && linkCount(as, watcher.ref) === 1);
  watcher.ctx.unlink(t);
  out.unlinked = await within(() => linkCount(bs, target.ref) === 0 && linkCount(as, watcher.ref) === 0);
  watcher.ctx.link(t);
  out.relinked = await within(() => linkCount(bs, target.ref) === 1);
  // A call after the link and monitor frames: they reach b before the crash does.
  await as.call(t, 'sync', 3_000).catch(() => undefined);
  bs.exit(target.ref, new Error('boom'));
  await within(() => watcher.seen.length >= 2);
  // Anything else (a second DOWN from a monitor that was dropped) would have come by now too.
  await as.call(await view(a, b, trapping.ref), 'sync', 3_000).catch(() => undefined);
  out.afterCrash = watcher.seen.map((line) => line.replace(String(target.ref), 'TARGET')).sort();
  out.linksAfterCrash = linkCount(as, watcher.ref);
  out.targetAliveAfterCrash = as.isAlive(t);

  for (const ref of cleanup) (ref.node === a.name ? as : bs).exit(ref, 'kill');
  return out;
}

describe('a ref rebuilt from its parts, over a node link', () => {
  it('every ref operation gives the same result as on the ref the link carried', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await a.connect(b.name);
    const results: Record<string, Record<string, unknown>> = {};
    for (const [name, view] of views) results[name] = await probe(a, b, view);
    const original = results[views[0]![0]]!;
    // The carried ref behaves as documented, so the comparison is worth something.
    expect(original).toEqual({
      call: 'ping',
      sent: ['hello'],
      alive: true,
      watchedBeforeExit: [],
      killed: true,
      exited: 'killed',
      watched: ['killed'],
      aliveAfterKill: false,
      trappedExit: ['EXIT OUTSIDE shutdown'],
      linked: true,
      unlinked: true,
      relinked: true,
      afterCrash: ['DOWN TARGET Error: boom', 'EXIT TARGET Error: boom'],
      linksAfterCrash: 0,
      targetAliveAfterCrash: false,
    });
    // One comparison of all of them, so a failure shows every operation that differs.
    expect(results).toEqual(Object.fromEntries(views.map(([name]) => [name, original])));
    expect(b.stats().unknownActors).toBe(0);
  });

  it('a flood of sends to a rebuilt ref is delivered, none counted as unknown actors', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await a.connect(b.name);
    let received = 0;
    const sink = b.system.spawn(() => void received++);
    const rebuilt = parseRef(JSON.parse(JSON.stringify(sink)) as string);
    const total = 20_000;
    // In slices, so the link's send queue (4 MiB by default) never drops any.
    for (let sent = 0; sent < total; ) {
      for (const end = sent + 2_000; sent < end; sent++) a.system.send(rebuilt, sent);
      await within(() => received + b.stats().unknownActors >= sent, 10_000);
    }
    await within(() => received + b.stats().unknownActors >= total, 10_000);
    expect({ received, unknownActors: b.stats().unknownActors, queueFull: a.stats().queueFull }).toEqual({ received: total, unknownActors: 0, queueFull: 0 });
    b.system.exit(sink, 'kill');
  });
});

/**
 * A node's own parts run under its supervisor (`molo.cluster_sup`): the net kernel, which peers
 * call by name so a restarted kernel serves them at once, and one actor per link under
 * `node_links`, whose death takes its link down and whose node dials again. Real nodes over TCP.
 */
import { describe, expect, it } from 'vitest';
import { behaviourModule, type Ref } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { CLUSTER_SERVICES_NAME, InvalidNodeOption, NET_KERNEL_NAME, nodeChild, type DownReason, type Node } from '../../src/nodes/index.js';
import { eventuallyAsync } from '../data/kv/stores.js';
import { freePort } from '../support/ports.js';
import { eventually, testSystem } from '../support/systems.js';
import { SECRET, testNode } from './support.js';

const childIds = async (node: Node, supervisor: Ref | string): Promise<string[]> =>
  (await Supervisor.whichChildren(node.system, supervisor)).map((child) => String(child.id)).sort();

async function linkActors(node: Node): Promise<{ id: string; ref: Ref }[]> {
  const links = (await Supervisor.whichChildren(node.system, CLUSTER_SERVICES_NAME)).find((child) => child.id === 'node_links')!.ref as Ref;
  return (await Supervisor.whichChildren(node.system, links)).flatMap((child) => (typeof child.ref === 'object' ? [{ id: String(child.id), ref: child.ref as Ref }] : []));
}

describe('the net kernel under the node supervisor', () => {
  it('killed, it is restarted under its name and answers peers at once, on the same link', async () => {
    const a = await testNode('nk_a');
    const b = await testNode('nk_b');
    await b.connect(a.name);
    expect(await childIds(a, CLUSTER_SERVICES_NAME)).toEqual(['net_kernel', 'node_links']);
    const thing = a.system.spawn(() => {}, { name: 'thing' });
    expect((await b.whereis('thing', a.name))?.id).toBe(thing.id);

    const first = a.system.whereis(NET_KERNEL_NAME)!;
    a.system.exit(first, 'kill');
    await eventually(() => {
      const again = a.system.whereis(NET_KERNEL_NAME);
      return again !== undefined && again.id !== first.id;
    }, 5_000, 'the kernel restarted');
    // Called by name, the new kernel answers; the link never went down.
    expect((await b.whereis('thing', a.name))?.id).toBe(thing.id);
    expect(await b.whereis('nothing', a.name)).toBeUndefined();
    expect(b.stats().linksDown).toBe(0);
    expect((await Supervisor.status(a.system, CLUSTER_SERVICES_NAME)).restartsInWindow).toBe(1);
  });

  it('a remote spawn by name takes an infinite timeout, and refuses a malformed one', async () => {
    const a = await testNode('nkt_a', { remoteSpawn: true });
    const b = await testNode('nkt_b');
    await b.connect(a.name);
    const counter = behaviourModule(new URL('../actors/placement/fixtures/counter.ts', import.meta.url), 'counter', 5);
    const spawned = await b.spawn(a.name, counter, { name: 'counted' }, Infinity);
    expect(spawned?.id).toBe(a.system.whereis('counted')?.id);
    for (const bad of [-1, Number.NaN]) await expect(b.spawn(a.name, counter, {}, bad)).rejects.toBeInstanceOf(InvalidNodeOption);
  });

  it('answers a call by name only to an actor of the link it came on: a peer cannot make it answer a third node', async () => {
    const a = await testNode('nkf_a');
    const b = await testNode('nkf_b');
    const c = await testNode('nkf_c');
    await a.connect(b.name);
    await a.connect(c.name);
    const heard: unknown[] = [];
    const victim = c.system.spawn((message) => void heard.push(message));
    a.system.spawn(() => {}, { name: 'secret-thing' });
    // b forges a call whose answer would go to c's actor, then one of its own.
    b.sendNamed(NET_KERNEL_NAME, a.name, ['$call', victim, 1, ['whereis', 'secret-thing']]);
    const own: unknown[] = [];
    const mine = b.system.spawn((message) => void own.push(message));
    b.sendNamed(NET_KERNEL_NAME, a.name, ['$call', mine, 7, ['whereis', 'secret-thing']]);
    await eventually(() => own.length === 1, 5_000, 'b answered for its own actor');
    expect((own[0] as unknown[]).slice(0, 2)).toEqual(['$reply', 7]);
    // Anything a sent c travels the a–c link ahead of this call's answer.
    await c.whereis('secret-thing', a.name);
    await c.system.settle();
    expect(heard).toEqual([]);
  });

  it('drops malformed calls by name without an answer or a crash, and serves the next well-formed one', async () => {
    const a = await testNode('nkm_a');
    const b = await testNode('nkm_b');
    await b.connect(a.name);
    const kernel = a.system.whereis(NET_KERNEL_NAME)!;
    const got: unknown[] = [];
    const mine = b.system.spawn((message) => void got.push(message));
    const malformed: unknown[] = [
      null,
      'x'.repeat(10_000),
      ['$call'],
      ['$call', 'not a ref', 1, ['whereis', 'x']],
      ['$call', mine, 'not a number', ['whereis', 'x']],
      ['$call', mine, 2, ['whereis', 'x'], 'extra'],
      ['$call', mine, 3, { deeply: { nested: [1, 2, 3] } }],
      ['$call', mine, 4, ['spawn', 'file:///etc/passwd', 'x', [], {}]],
    ];
    for (const message of malformed) b.sendNamed(NET_KERNEL_NAME, a.name, message);
    // Answered: an unknown request gets null; a spawn is refused (remoteSpawn is off by default) as an error value.
    expect(await b.whereis('nothing', a.name)).toBeUndefined();
    await eventually(() => got.length === 2, 5_000, 'the two well-formed calls answered');
    expect(got[0]).toEqual(['$reply', 3, null]);
    expect((got[1] as unknown[]).slice(0, 2)).toEqual(['$reply', 4]);
    expect(((got[1] as unknown[])[2] as unknown[])[0]).toBe('error');
    expect(a.system.whereis(NET_KERNEL_NAME)?.id).toBe(kernel.id);
  });
});

describe('node links as actors under node_links', () => {
  it('each link has an actor named by its peer; killed, the link goes down and the node dials again', async () => {
    const a = await testNode('lk_a');
    const b = await testNode('lk_b');
    const reasons: DownReason[] = [];
    a.on('nodedown', (_peer, reason) => void reasons.push(reason));
    await a.connect(b.name);
    await eventuallyAsync(async () => (await linkActors(a)).length === 1 && (await linkActors(b)).length === 1, 5_000, 'both links have actors');
    const [first] = await linkActors(a);
    expect(first!.id).toBe(b.name);
    expect((await linkActors(b))[0]!.id).toBe(a.name);
    expect(await a.system.call(first!.ref, 'status')).toMatchObject({ node: b.name, queuedBytes: expect.any(Number), upAt: expect.any(Number) });

    a.system.exit(first!.ref, 'kill');
    await eventually(() => reasons.includes('killed'), 5_000, 'the link down with its actor');
    // a keeps b connected: it dials again, and the new link gets an actor of its own.
    await eventuallyAsync(async () => {
      const now = await linkActors(a);
      return a.isConnected(b.name) && now.length === 1 && now[0]!.ref.id !== first!.ref.id;
    }, 10_000, 'the link up again with a new actor');
    const echo = b.system.spawn((message) => void (Array.isArray(message) && a.system.send(message[0] as Ref, 'pong')), { name: 'echo' });
    expect(echo).toBeDefined();
    expect((await a.whereis('echo', b.name))?.id).toBe(echo.id);

    // Stopped, the node closes its links as `stopped`: the shutdown's exits of the link actors do not close them first.
    await a.stop();
    expect(reasons).toEqual(['killed', 'stopped']);
  });
});

describe('a cluster node as a child of an application tree', () => {
  it('starts with the tree, is started again under its name when it stops from elsewhere or is killed, and stops with the tree', async () => {
    const app = testSystem();
    const port = await freePort();
    const child = nodeChild(app, { name: `nc_a@127.0.0.1:${port}`, secret: SECRET, system: { logger: false } });
    const tree = await Supervisor.start(app, { strategy: 'one_for_one', intensity: 5, periodMs: 10_000, children: [child] });
    const b = await testNode('nc_b');
    try {
      const first = await child.node;
      expect(child.current()).toBe(first);
      expect(await childIds(first, CLUSTER_SERVICES_NAME)).toEqual(['net_kernel', 'node_links']);
      await b.connect(first.name);
      first.system.spawn(() => {}, { name: 'here' });

      // Stopped from elsewhere: the tree starts a new node with the same name, and b (which keeps it connected) dials it again.
      await first.stop();
      await eventually(() => child.current() !== undefined && child.current() !== first && b.isConnected(first.name), 10_000, 'a new node, reconnected');
      const second = child.current()!;
      expect(second.name).toBe(first.name);
      expect(await b.whereis('here', second.name)).toBeUndefined();
      second.system.spawn(() => {}, { name: 'here' });
      expect(await b.whereis('here', second.name)).toBeDefined();

      // Killed, the keeper's node is stopped and a third one takes the port.
      const [keeper] = await Supervisor.whichChildren(app, tree);
      app.exit(keeper!.ref as Ref, 'kill');
      await eventually(() => second.stopped && child.current() !== undefined && child.current() !== second, 10_000, 'a third node');
      const third = child.current()!;
      await eventually(() => b.isConnected(third.name), 10_000, 'b reconnected to the third');
      expect((await Supervisor.status(app, tree)).restartsInWindow).toBe(2);

      // Stopped with its tree: the node is stopped before the supervisor's stop resolves.
      await Supervisor.stop(app, tree);
      expect(third.stopped).toBe(true);
      expect(child.current()).toBeUndefined();
    } finally {
      if (app.isAlive(tree)) await Supervisor.stop(app, tree);
    }
  }, 30_000);

  it('refuses an unknown option, naming the nearest', () => {
    expect(() => nodeChild(testSystem(), { name: 'x@127.0.0.1:0', secret: SECRET }, { ids: 'n' } as never)).toThrow(/nodeChild\.ids.*id/);
  });
});

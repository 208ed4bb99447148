/**
 * Cluster services attribute every message to the link it arrived on. Three real nodes over TCP:
 * a (the victim), b (a connected peer that forges) and c (the third node whose names and members b
 * speaks for). b sends raw service messages to a by name, as any connected peer can
 * (`sendNamed`, `callNamed`); none of them may change a's state, and each is counted and logged.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import { createBroker } from '../../src/bus/index.js';
import { createLogger } from '../../src/telemetry/index.js';
import { GLOBAL_NAME, GROUPS_NAME, startClusterTopics, startGlobal, startGroups, TOPICS_NAME, type Node } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { logCapture } from '../telemetry/helpers.js';
import { testNode } from './support.js';

/** Sends `message` to `service` on `to` as `from`'s link carries it, then waits until `to` handled it. */
async function forge(from: Node, to: Node, service: string, message: unknown[]): Promise<void> {
  from.sendNamed(service, to.name, message);
  // A call on the same link, to the same actor: answered only after the forgery was handled.
  await from.callNamed(service, to.name, ['noop', from.name], 10_000);
}

describe('cluster services: a peer speaks only for its own link', () => {
  it('a peer forging each message kind for a third node changes nothing on the victim, and each forgery is counted', async () => {
    const capture = logCapture();
    const registry = new Registry();
    const a = await testNode('fa', { system: { logger: createLogger({ destination: capture.stream }) } });
    const b = await testNode('fb');
    const c = await testNode('fc');
    await a.connect(b.name);
    await a.connect(c.name);
    await b.connect(c.name);
    const broker = createBroker({ system: a.system });
    const services = {
      a: { global: startGlobal(a, { lockTimeoutMs: 30_000, registry }), groups: startGroups(a, { registry }), topics: startClusterTopics(a, broker, { registry }) },
      b: { global: startGlobal(b), groups: startGroups(b) },
      c: { global: startGlobal(c, { lockTimeoutMs: 30_000 }), groups: startGroups(c) },
    };
    const heard: string[] = [];
    broker.subscribe('news', (message) => void heard.push(message.text()));
    const actor = (node: Node): Ref => node.system.spawn(() => {});
    const [c1, c2, a1, a2] = [actor(c), actor(c), actor(a), actor(a)];
    await services.c.global.register('c-name', c1);
    services.c.groups.join('g', c1);
    await services.a.global.register('a-name', a1);
    await eventually(() => services.a.global.whereis('c-name') !== undefined && services.a.groups.members('g').length === 1, 10_000, 'c known on a');
    // c's own reservations on a (as c's register makes them): what a forged release would free.
    for (const lock of ['lk1', 'lk2']) expect(await c.callNamed(GLOBAL_NAME, a.name, ['reserve', c.name, lock, c1], 10_000)).toEqual(['ok']);

    const now = Date.now();
    const changed: string[] = [];
    const check = (kind: string, held: boolean): void => void (held || changed.push(kind));
    const g = services.a.global;
    const pg = services.a.groups;

    await forge(b, a, GLOBAL_NAME, ['add', c.name, ['forged-add', c2, now]]);
    check('global add (claims c)', g.whereis('forged-add') === undefined);
    await forge(b, a, GLOBAL_NAME, ['add', b.name, ['forged-add2', c2, now]]);
    check('global add (c ref)', g.whereis('forged-add2') === undefined);
    // Sent to the service's ref rather than its name: attributed to the link all the same.
    const service = await b.whereis(GLOBAL_NAME, a.name);
    b.system.send(service!, ['add', c.name, ['forged-by-ref', c2, now]]);
    await forge(b, a, GLOBAL_NAME, ['noop', b.name]);
    check('global add (by ref)', g.whereis('forged-by-ref') === undefined);
    await forge(b, a, GLOBAL_NAME, ['remove', c.name, 'c-name', c1]);
    check('global remove', g.whereis('c-name')?.id === c1.id);
    await forge(b, a, GLOBAL_NAME, ['release', c.name, 'lk1', c1]);
    await forge(b, a, GLOBAL_NAME, ['release', b.name, 'lk2', c1]);
    for (const lock of ['lk1', 'lk2']) {
      const taken = await g.register(lock, a2).then(() => false, () => true);
      check(`global release ${lock}`, taken);
    }
    const reply = await b.callNamed(GLOBAL_NAME, a.name, ['reserve', c.name, 'rz', c2], 10_000);
    check('global reserve', reply === null && (await g.register('rz', a2).then(() => true, () => false)));
    await forge(b, a, GLOBAL_NAME, ['unregister', c.name, 'a-name', a1]);
    check('global unregister', g.whereis('a-name')?.id === a1.id);
    await forge(b, a, GLOBAL_NAME, ['sync', c.name, [['forged-sync', c2, now]]]);
    check('global sync', g.whereis('forged-sync') === undefined && g.whereis('c-name')?.id === c1.id);
    await forge(b, a, GLOBAL_NAME, ['hello', c.name, [['forged-hello', c2, now]]]);
    check('global hello', g.whereis('forged-hello') === undefined && g.whereis('c-name')?.id === c1.id);

    await forge(b, a, GROUPS_NAME, ['join', c.name, 'g2', [c2]]);
    check('pg join (claims c)', pg.members('g2').length === 0);
    await forge(b, a, GROUPS_NAME, ['join', b.name, 'g3', [c2]]);
    check('pg join (c ref)', pg.members('g3').length === 0);
    await forge(b, a, GROUPS_NAME, ['leave', c.name, 'g', [c1]]);
    check('pg leave', pg.members('g').length === 1);
    await forge(b, a, GROUPS_NAME, ['sync', c.name, [['g-sync', [c2]]]]);
    check('pg sync', pg.members('g-sync').length === 0 && pg.members('g').length === 1);
    await forge(b, a, GROUPS_NAME, ['hello', c.name, [['g-hello', [c2]]]]);
    check('pg hello', pg.members('g-hello').length === 0 && pg.members('g').length === 1);

    await forge(b, a, TOPICS_NAME, ['pub', c.name, 'news', new TextEncoder().encode('forged'), null]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    check('topics pub', heard.length === 0);

    expect(changed).toEqual([]);
    expect(g.forgeries()).toEqual({ add: 3, remove: 1, release: 2, reserve: 1, unregister: 1, sync: 1, hello: 1 });
    expect(pg.forgeries()).toEqual({ join: 2, leave: 1, sync: 1, hello: 1 });
    expect(services.a.topics.forgeries()).toEqual({ pub: 1 });
    const metrics = await registry.metrics();
    expect(metrics).toContain(`molo_cluster_forged_messages_total{node="${a.name}",service="global",kind="release"} 2`);
    expect(metrics).toContain(`molo_cluster_forged_messages_total{node="${a.name}",service="pg",kind="join"} 2`);
    expect(metrics).toContain(`molo_cluster_forged_messages_total{node="${a.name}",service="topics",kind="pub"} 1`);
    // Logged once per service and kind, at warn, naming the link's node and the claimed one.
    const logged = capture.records().filter((record) => record.msg === 'nodes.cluster_forged');
    expect(logged.length).toBe(12);
    expect(logged[0]).toMatchObject({ level: 40, peer: b.name, service: 'global', kind: 'add' });

    // Legitimate traffic still flows both ways: b speaks for its own actors.
    const b1 = actor(b);
    await services.b.global.register('b-name', b1);
    services.b.groups.join('g', b1);
    await eventually(() => g.whereis('b-name')?.id === b1.id && pg.members('g').length === 2, 10_000, 'b known on a');
    expect(services.c.global.whereis('a-name')?.id).toBe(a1.id);
    broker.close();
  }, 30_000);
});

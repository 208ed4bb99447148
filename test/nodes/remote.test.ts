/**
 * Distributed actors between this process and peer nodes in their own OS processes, on loopback:
 * send, call, monitor and link with the local API; a SIGKILLed node fires monitors and links with
 * `noconnection` and fails pending calls with NodeDown; a wrong secret is refused and counted.
 */
import { describe, expect, it } from 'vitest';
import { behaviourModule, CalleeExited, DownMessage, ExitMessage, type ExitReason, type Ref } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { HandshakeRefused, InvalidNodeOption, NodeDown, RemoteSpawnRefused } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { peerProcess } from './child.js';
import { SECRET, testNode } from './support.js';

describe('distributed actors across OS processes', () => {
  it('send, call, whereis and sendNamed reach a remote actor, and it replies with sends', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    await a.connect(b.name);
    const echo = (await a.whereis('echo', b.name)) as Ref;
    expect(echo.node).toBe(b.name);
    expect(await a.system.call(echo, ['echo', { deep: [1, 'two', new Map([[3, 4]])] }])).toEqual({ deep: [1, 'two', new Map([[3, 4]])] });
    expect(await a.callNamed('echo', b.name, ['echo', 'by name'])).toBe('by name');
    expect(await a.whereis('nobody', b.name)).toBeUndefined();
    const got: unknown[] = [];
    const inbox = a.system.spawn((message) => void got.push(message));
    for (let i = 0; i < 100; i++) a.system.send(echo, { to: inbox, value: i });
    a.sendNamed('echo', b.name, { to: inbox, value: 'named' });
    await eventually(() => got.length === 101);
    expect(got).toEqual([...Array.from({ length: 100 }, (_, i) => i), 'named']);
    a.system.exit(inbox, 'kill');
  });

  it('monitor and link a remote actor: DOWN and EXIT carry its reason', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    await a.connect(b.name);
    const echo = (await a.whereis('echo', b.name)) as Ref;
    const stopped = (await a.system.call(echo, ['spawn'])) as Ref;
    const crashing = (await a.system.call(echo, ['spawn'])) as Ref;
    const seen: (DownMessage | ExitMessage)[] = [];
    const watcher = a.system.spawn(
      (message, ctx) => {
        if (message === 'watch') {
          ctx.monitor(stopped);
          ctx.link(crashing);
        } else if (message instanceof DownMessage || message instanceof ExitMessage) seen.push(message);
      },
      { trapExit: true },
    );
    a.system.send(watcher, 'watch');
    await eventually(() => a.system.info(watcher)?.links?.length === 1);
    // Let the link and monitor frames reach b before the workers go.
    expect(await a.system.call(echo, ['echo', 'sync'])).toBe('sync');
    a.system.send(stopped, 'stop');
    a.system.send(crashing, 'crash');
    await eventually(() => seen.length === 2);
    const down = seen.find((message) => message instanceof DownMessage)!;
    const exit = seen.find((message) => message instanceof ExitMessage)!;
    expect(down.ref).toBe(stopped);
    expect(down.reason).toBe('normal');
    expect(exit.from).toBe(crashing);
    expect((exit.reason as Error).message).toBe('worker crashed on request');
    a.system.exit(watcher, 'kill');
  });

  it('SIGKILL a node: monitors and links see noconnection, pending calls fail with NodeDown, nodedown fires', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    await a.connect(b.name);
    const echo = (await a.whereis('echo', b.name)) as Ref;
    const reasons: ExitReason[] = [];
    const watcher = a.system.spawn(
      (message, ctx) => {
        if (message === 'watch') ctx.monitor(echo);
        else if (message instanceof DownMessage) reasons.push(message.reason);
      },
    );
    const linked = a.system.spawn((message, ctx) => {
      if (message === 'link') ctx.link(echo);
      else if (message instanceof ExitMessage) reasons.push(message.reason);
    }, { trapExit: true });
    a.system.send(watcher, 'watch');
    a.system.send(linked, 'link');
    expect(await a.system.call(echo, ['echo', 'sync'])).toBe('sync');
    const downs: string[] = [];
    a.on('nodedown', (node) => downs.push(node));
    const pending = a.system.call(echo, ['slow', 60_000], 30_000);
    const started = Date.now();
    b.child.kill('SIGKILL');
    const error = await pending.catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NodeDown);
    expect((error as NodeDown).code).toBe('NODE_DOWN');
    expect(Date.now() - started).toBeLessThan(5_000);
    await eventually(() => reasons.length === 2);
    expect(reasons).toEqual(['noconnection', 'noconnection']);
    expect(downs).toEqual([b.name]);
    // Nothing routes there now: a new call fails at once, a new monitor fires at once.
    await expect(a.system.call(echo, ['echo', 1])).rejects.toBeInstanceOf(NodeDown);
    expect(await a.system.exited(echo)).toBe('noconnection');
    a.system.exit(watcher, 'kill');
    a.system.exit(linked, 'kill');
  });

  it('a peer with the wrong secret is refused and counted; the node keeps serving', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    await a.connect(b.name);
    // It dials us (its seed), and we dial it: both ways it fails to prove the secret.
    const intruder = await peerProcess('intruder', 'not-the-cluster-secret-at-all', a.name);
    await eventually(() => (a.stats().handshakesRefused.auth ?? 0) >= 1, 5_000, 'the intruder refused');
    const refused = await a.connect(intruder.name).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HandshakeRefused);
    expect((refused as HandshakeRefused).reason).toBe('auth');
    a.disconnect(intruder.name);
    expect(a.stats().handshakesRefused.auth).toBeGreaterThanOrEqual(2);
    expect(intruder.child.exitCode).toBeNull();
    await expect(a.connect(b.name)).resolves.toBeUndefined();
    expect(await a.callNamed('echo', b.name, ['echo', 'still up'])).toBe('still up');
    expect(a.nodes()).toEqual([b.name]);
  });

  it('spawns a behaviour module on a remote node: on its loop, in a thread, and under its supervisor', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    const closed = await testNode('closed');
    await a.connect(b.name);
    await a.connect(closed.name);
    const counter = behaviourModule(new URL('../actors/placement/fixtures/counter.ts', import.meta.url), 'counter', 5);
    const onLoop = (await a.spawn(b.name, counter, { name: 'c1' }))!;
    expect(onLoop.node).toBe(b.name);
    expect(await a.system.call(onLoop, { add: 1 })).toBe(6);
    expect((await a.whereis('c1', b.name))?.equals(onLoop)).toBe(true);
    const inThread = (await a.spawn(b.name, counter, { placement: 'thread' }))!;
    expect(inThread.creation).not.toBe(onLoop.creation);
    expect(await a.system.call(inThread, 'get')).toBe(5);
    const supervised = (await a.spawn(b.name, counter, { supervisor: 'sup', id: 'w1', name: 'w1' }))!;
    const sup = (await a.whereis('sup', b.name))!;
    expect((await Supervisor.whichChildren(a.system, sup)).map((child) => child.id)).toEqual(['w1']);
    await expect(a.system.call(supervised, 'crash')).rejects.toBeInstanceOf(CalleeExited);
    // Restarted by its supervisor there, under the same name.
    let restarted: Ref | undefined;
    for (let i = 0; i < 100 && (restarted === undefined || restarted.equals(supervised)); i++) {
      restarted = await a.whereis('w1', b.name);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(restarted).toBeDefined();
    expect(restarted!.equals(supervised)).toBe(false);
    expect(await a.system.call(restarted!, 'get')).toBe(5);
    // A node spawns for its peers only what `remoteSpawn` allows (nothing by default).
    // The error crosses as itself: its class name, code and message.
    const refused = (await a.spawn(closed.name, counter).catch((error: unknown) => error)) as Error & { code: string };
    expect(refused).toMatchObject({ name: 'RemoteSpawnRefused', code: RemoteSpawnRefused.code });
    expect(refused.message).toContain('remoteSpawn');
  });
});

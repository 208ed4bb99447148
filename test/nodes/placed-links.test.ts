/**
 * Links between an actor placed in a thread or process host on this node and an actor of a peer
 * node in its own OS process: either side links, exits cross both ways (trapped or not, `kill`
 * included), unlink stops them, a dead host's reason reaches the remote side as it reaches local
 * actors, and a lost node or link gives `noconnection` on both sides. A peer may not speak for
 * actors that are not its node's: such link frames are dropped and counted.
 */
import { describe, expect, it } from 'vitest';
import { behaviourModule, placementHosts, Ref, shutdownWith, type ExitReason } from '../../src/actors/index.js';
import type { RouterCore } from '../../src/actors/placement/router-core.js';
import { FrameKind } from '../../src/actors/placement/frames.js';
import type { Node } from '../../src/nodes/index.js';
import { eventually, sleep } from '../support/systems.js';
import type { ProbeOptions, ProbeRequest } from '../actors/placement/fixtures/probe.js';
import { peerProcess } from './child.js';
import { rawPeer } from './raw-peer.js';
import { SECRET, testNode } from './support.js';

const probeUrl = new URL('../actors/placement/fixtures/probe.ts', import.meta.url);
const probe = (options: ProbeOptions = {}) => behaviourModule(probeUrl, 'probe', options);

interface Exit {
  readonly from: Ref;
  readonly reason: ExitReason;
}

/** This node (`a`, in the test process) linked to `b`, a node in its own OS process. */
async function cluster(): Promise<{ a: Node; b: Awaited<ReturnType<typeof peerProcess>> }> {
  const a = await testNode('a');
  const b = await peerProcess('b', SECRET);
  await a.connect(b.name);
  return { a, b };
}

const ask = <T = unknown>(a: Node, ref: Ref, request: ProbeRequest): Promise<T> => a.system.call<T>(ref, request, 10_000);

/** A probe on b's loop (b serves remote spawns), driven by calls from a. */
async function remoteProbe(a: Node, b: string, options: ProbeOptions = {}): Promise<Ref> {
  return (await a.spawn(b, probe(options)))!;
}

/** Polls a probe's log until it holds `count` exit messages; returns them. */
async function exitsOf(a: Node, ref: Ref, count: number, timeoutMs = 8_000): Promise<Exit[]> {
  const seen: Exit[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await ask<{ type?: string; from: Ref; reason: ExitReason }[]>(a, ref, 'log');
    for (const entry of log) if (entry.type === 'EXIT') seen.push({ from: entry.from, reason: entry.reason });
    if (seen.length >= count) return seen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} exits of ${String(ref)} (saw ${seen.length})`);
    await sleep(10);
  }
}

/** Links still held across the boundary by this node's hub and by its route to `ref`'s node. */
function crossLinks(a: Node, remote: Ref): { hub: number; peer: number } {
  const hub = a.system.router as RouterCore | undefined;
  const peer = a.system.routeOf(remote) as RouterCore;
  return { hub: hub?.remoteCounts.links ?? 0, peer: peer.remoteCounts?.links ?? 0 };
}

/** Kills `refs` and waits for each exit. */
async function killAll(a: Node, ...refs: Ref[]): Promise<void> {
  const exits = refs.map((ref) => a.system.exited(ref));
  for (const ref of refs) a.system.exit(ref, 'kill');
  await Promise.all(exits);
}

const messageOf = (reason: ExitReason): string => (reason as Error).message;

/** Each test starts a node process and hosts (process hosts load tsx): slow on a loaded machine. */
const SLOW = { timeout: 45_000 };

describe.each(['thread', 'process'] as const)('links between a %s-placed actor and a remote actor', SLOW, (placement) => {
  it('the placed actor links: a remote crash kills it; a remote kill reaches it trapped as killed; its own crash kills the remote one', async () => {
    const { a, b } = await cluster();
    const [r1, r2, r3] = [await remoteProbe(a, b.name), await remoteProbe(a, b.name), await remoteProbe(a, b.name)];
    const plain = await a.system.spawnPlaced(probe(), { placement });
    const trapping = await a.system.spawnPlaced(probe({ trapExit: true }), { placement, host: `${placement}-links` });
    const doomed = await a.system.spawnPlaced(probe(), { placement, host: `${placement}-links` });
    expect(await ask(a, plain, { link: r1 })).toBe('linked');
    expect(await ask(a, trapping, { link: r2 })).toBe('linked');
    expect(await ask(a, doomed, { link: r3 })).toBe('linked');
    // Behind the links on the one TCP link: b holds them.
    await ask(a, r1, 'ping');
    expect(crossLinks(a, r1)).toEqual({ hub: 3, peer: 3 });

    const plainExit = a.system.exited(plain);
    await ask(a, r1, { crash: 'remote boom' }).catch(() => {});
    expect(messageOf(await plainExit)).toBe('remote boom');

    a.system.exit(r2, 'kill');
    const [killed] = await exitsOf(a, trapping, 1);
    expect(killed!.from.equals(r2)).toBe(true);
    expect(killed!.reason).toBe('killed');

    const remoteExit = a.system.exited(r3);
    await ask(a, doomed, { crash: 'placed boom' }).catch(() => {});
    expect(messageOf(await remoteExit)).toBe('placed boom');

    await eventually(() => crossLinks(a, r1).hub === 0 && crossLinks(a, r1).peer === 0, 5_000, 'link bookkeeping released');
    await killAll(a, trapping);
  });

  it('the remote actor links: the placed actor exits abnormally, a trapping remote gets EXIT; a remote stop reaches a trapping placed actor', async () => {
    const { a, b } = await cluster();
    const watcher = await remoteProbe(a, b.name, { trapExit: true });
    const plainRemote = await remoteProbe(a, b.name);
    const stopping = await remoteProbe(a, b.name);
    const crashing = await a.system.spawnPlaced(probe(), { placement });
    const killed = await a.system.spawnPlaced(probe(), { placement, host: `${placement}-remote-links` });
    const trapping = await a.system.spawnPlaced(probe({ trapExit: true }), { placement, host: `${placement}-remote-links` });
    expect(await ask(a, watcher, { link: crashing })).toBe('linked');
    expect(await ask(a, plainRemote, { link: killed })).toBe('linked');
    expect(await ask(a, stopping, { link: trapping })).toBe('linked');
    // Behind the links: the hosts hold them.
    await Promise.all([ask(a, crashing, 'ping'), ask(a, killed, 'ping'), ask(a, trapping, 'ping')]);

    await ask(a, crashing, { crash: 'placed boom' }).catch(() => {});
    const [exit] = await exitsOf(a, watcher, 1);
    expect(exit!.from.equals(crashing)).toBe(true);
    expect(messageOf(exit!.reason)).toBe('placed boom');

    const remoteExit = a.system.exited(plainRemote);
    a.system.exit(killed, 'kill');
    expect(await remoteExit).toBe('killed');

    expect(await ask(a, stopping, { stop: shutdownWith({ why: 'done' }) })).toBe('stopping');
    const [stopped] = await exitsOf(a, trapping, 1);
    expect(stopped!.from.equals(stopping)).toBe(true);
    expect(stopped!.reason).toEqual({ shutdown: { why: 'done' } });

    await killAll(a, trapping, watcher);
    await eventually(() => crossLinks(a, watcher).hub === 0 && crossLinks(a, watcher).peer === 0, 5_000, 'link bookkeeping released');
  });

  it('unlink, from either side, stops the exit from crossing', async () => {
    const { a, b } = await cluster();
    const r1 = await remoteProbe(a, b.name);
    const r2 = await remoteProbe(a, b.name, { trapExit: true });
    const placed = await a.system.spawnPlaced(probe({ trapExit: true }), { placement, host: `${placement}-unlink` });
    const other = await a.system.spawnPlaced(probe(), { placement, host: `${placement}-unlink` });
    // Linked and unlinked by the placed actor; then the remote one crashes.
    expect(await ask(a, placed, { link: r1 })).toBe('linked');
    expect(await ask(a, placed, { unlink: r1 })).toBe('unlinked');
    // Linked and unlinked by the remote actor; then the placed one crashes.
    expect(await ask(a, r2, { link: other })).toBe('linked');
    expect(await ask(a, r2, { unlink: other })).toBe('unlinked');
    await ask(a, r1, 'ping');
    await ask(a, other, 'ping');
    expect(crossLinks(a, r1)).toEqual({ hub: 0, peer: 0 });

    const r1Exit = a.system.exited(r1);
    await ask(a, r1, { crash: 'unlinked remote boom' }).catch(() => {});
    await r1Exit;
    const otherExit = a.system.exited(other);
    await ask(a, other, { crash: 'unlinked placed boom' }).catch(() => {});
    await otherExit;
    // A link exit would have crossed ahead of these calls, on the same channels.
    expect(await ask(a, placed, 'log')).toEqual([]);
    expect(await ask(a, r2, 'log')).toEqual([]);
    expect(a.system.isAlive(placed)).toBe(true);

    // Linked again: the link works, so the silence above was the unlink's.
    expect(await ask(a, placed, { link: r2 })).toBe('linked');
    await ask(a, r2, 'ping');
    a.system.exit(r2, 'kill');
    const [exit] = await exitsOf(a, placed, 1);
    expect(exit!.from.equals(r2)).toBe(true);
    await killAll(a, placed);
  });

  it('a dead host: remote actors linked to its actors get the reason local linked actors get', async () => {
    const { a, b } = await cluster();
    const remote = await remoteProbe(a, b.name, { trapExit: true });
    const remoteByLink = await remoteProbe(a, b.name, { trapExit: true });
    const placed = await a.system.spawnPlaced(probe(), { placement });
    const localExits: Exit[] = [];
    const local = a.system.spawn(
      {
        init(ctx) {
          ctx.link(placed);
        },
        handle(_ctx, message) {
          if ((message as { type?: string }).type === 'EXIT') localExits.push(message as Exit);
        },
      },
      { trapExit: true },
    );
    expect(await ask(a, placed, { link: remote })).toBe('linked');
    expect(await ask(a, remoteByLink, { link: placed })).toBe('linked');
    await ask(a, placed, 'ping');
    await ask(a, remote, 'ping');

    if (placement === 'process') {
      const { pid } = await ask<{ pid: number }>(a, placed, 'where');
      expect(placementHosts(a.system).some((host) => host.pid === pid)).toBe(true);
      process.kill(pid, 'SIGKILL');
    } else {
      void ask(a, placed, { exitHost: 7 }).catch(() => {});
    }
    await eventually(() => localExits.length === 1, 8_000, 'the local linked actor to see the host die');
    const reason = localExits[0]!.reason;
    expect(reason).toEqual(placement === 'process' ? { shutdown: { process_exit: null, signal: 'SIGKILL' } } : { shutdown: { thread_exit: 7 } });
    const [exit] = await exitsOf(a, remote, 1);
    expect(exit!.from.equals(placed)).toBe(true);
    expect(exit!.reason).toEqual(reason);
    const [other] = await exitsOf(a, remoteByLink, 1);
    expect(other!.reason).toEqual(reason);
    a.system.exit(local, 'kill');
  });
});

describe('placed actors on both nodes', SLOW, () => {
  it('an actor placed in a thread here and one in a thread there: the link carries exits both ways', async () => {
    const { a, b } = await cluster();
    const there = (await a.spawn(b.name, probe({ trapExit: true }), { placement: 'thread' }))!;
    const doomedThere = (await a.spawn(b.name, probe(), { placement: 'thread' }))!;
    // Placed in hosts there: not of b's main system.
    const echo = (await a.whereis('echo', b.name))!;
    expect([there.creation, doomedThere.creation]).not.toContain(echo.creation);
    const here = await a.system.spawnPlaced(probe(), { placement: 'thread' });
    expect(await ask(a, here, { link: doomedThere })).toBe('linked');
    expect(await ask(a, there, { link: here })).toBe('linked');
    await Promise.all([ask(a, doomedThere, 'ping'), ask(a, here, 'ping')]);
    // Linked from here, the actor there crashes: the one here dies of it; the trapping one there sees that.
    const hereExit = a.system.exited(here);
    await ask(a, doomedThere, { crash: 'boom there' }).catch(() => {});
    expect(messageOf(await hereExit)).toBe('boom there');
    const [exit] = await exitsOf(a, there, 1);
    expect(exit!.from.equals(here)).toBe(true);
    expect(messageOf(exit!.reason)).toBe('boom there');
    await killAll(a, there);
  });
});

describe('a lost node or link', SLOW, () => {
  it('node SIGKILLed: a trapping placed actor gets EXIT noconnection, a plain one exits with noconnection', async () => {
    const { a, b } = await cluster();
    const r1 = await remoteProbe(a, b.name);
    const r2 = await remoteProbe(a, b.name);
    const trapping = await a.system.spawnPlaced(probe({ trapExit: true }), { placement: 'thread', host: 'lost' });
    // Linked at spawn (the `link` option), from the remote side, and by the placed actor.
    const plain = await a.system.spawnPlaced(probe(), { placement: 'process', link: r2 });
    expect(await ask(a, trapping, { link: r1 })).toBe('linked');
    await ask(a, r1, 'ping');
    const plainExit = a.system.exited(plain);
    b.child.kill('SIGKILL');
    const [exit] = await exitsOf(a, trapping, 1);
    expect(exit!.from.equals(r1)).toBe(true);
    expect(exit!.reason).toBe('noconnection');
    expect(await plainExit).toBe('noconnection');
    expect(crossLinks(a, r1)).toEqual({ hub: 0, peer: 0 });
    // The node is not connected now: a new link gets noconnection at once.
    expect(await ask(a, trapping, { link: r2 })).toBe('linked');
    const [again] = await exitsOf(a, trapping, 1);
    expect(again).toMatchObject({ reason: 'noconnection' });
    expect(again!.from.equals(r2)).toBe(true);
    await killAll(a, trapping);
  });

  it('link dropped (disconnect): both the placed actor and the remote actor see noconnection', async () => {
    const { a, b } = await cluster();
    const remote = await remoteProbe(a, b.name, { trapExit: true });
    const placed = await a.system.spawnPlaced(probe({ trapExit: true }), { placement: 'thread' });
    expect(await ask(a, placed, { link: remote })).toBe('linked');
    await ask(a, remote, 'ping');
    a.disconnect(b.name);
    const [exit] = await exitsOf(a, placed, 1);
    expect(exit!.from.equals(remote)).toBe(true);
    expect(exit!.reason).toBe('noconnection');
    // Back over a new link, b's actor tells what it saw.
    await eventually(() => !a.isConnected(b.name));
    await a.connect(b.name);
    const [seen] = await exitsOf(a, remote, 1);
    expect(seen!.from.equals(placed)).toBe(true);
    expect(seen!.reason).toBe('noconnection');
    await killAll(a, placed, remote);
  });
});

describe('trust', () => {
  it('link frames from a peer about actors not of its node are dropped and counted; its own actors link', async () => {
    const a = await testNode('a');
    const peer = await rawPeer(a, 'p@127.0.0.1:1');
    await eventually(() => a.isConnected(peer.name));
    const placed = await a.system.spawnPlaced(probe({ trapExit: true }), { placement: 'thread' });
    const local = a.system.spawn(() => {});
    expect(await ask(a, placed, { link: local })).toBe('linked');
    const own = new Ref(peer.name, 5, peer.result.info.creation);
    const stranger = new Ref('c@127.0.0.1:9', 3, 42);
    const before = a.stats().framesDropped;
    // Each names, as its source, an actor that is not the peer's: a's own, or a third node's.
    peer.frame([FrameKind.LinkExit, placed, local, new Error('forged exit')]);
    peer.frame([FrameKind.LinkExit, placed, stranger, 'kill']);
    peer.frame([FrameKind.Link, local, placed]);
    peer.frame([FrameKind.Unlink, local, placed]);
    peer.frame([FrameKind.Link, stranger, placed]);
    // The peer's own actor links to the placed actor, then exits.
    peer.frame([FrameKind.Link, own, placed]);
    peer.frame([FrameKind.LinkExit, placed, own, new Error('peer actor crashed')]);
    await eventually(() => a.stats().framesDropped === before + 5, 5_000, 'the forged frames dropped');
    const [exit] = await exitsOf(a, placed, 1);
    expect(exit!.from.equals(own)).toBe(true);
    expect(messageOf(exit!.reason)).toBe('peer actor crashed');
    // The forged unlink did not cut the link to `local`: its exit still arrives.
    a.system.exit(local, 'kill');
    const [localExit] = await exitsOf(a, placed, 1);
    expect(localExit!.from.equals(local)).toBe(true);
    expect(localExit!.reason).toBe('killed');
    expect(a.isConnected(peer.name)).toBe(true);
    await killAll(a, placed);
    peer.socket.destroy();
  });
});

import { describe, expect, it } from 'vitest';
import {
  CalleeExited,
  CallTimeout,
  NoProc,
  PayloadTooLarge,
  type Ref,
} from '../../../src/actors/index.js';
import { eventually } from '../../support/systems.js';
import { recorder } from '../helpers.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, placementSystem, spawnProbe } from './support.js';

checkPlacementLeaks();

describe.each(HOST_PLACEMENTS)('messaging across a %s boundary', (placement) => {
  it('send and call reach the placed actor, in order, with values intact', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    expect(ref.node).toBe(system.node);
    expect(ref.creation).not.toBe(system.creation);
    expect(system.isAlive(ref)).toBe(true);
    const value = { list: [1, 'two', null, undefined], map: new Map([[1, { deep: true }]]), set: new Set(['a']), when: new Date(5), big: 2n ** 70n, bytes: new Uint8Array([1, 2]) };
    system.send(ref, 'first');
    system.send(ref, value);
    expect(await ask(system, ref, { echo: value })).toEqual(value);
    expect(await ask(system, ref, 'log')).toEqual(['first', value]);
    // Refs come back as the same objects.
    expect(await ask(system, ref, { echo: ref })).toBe(ref);
    await killAll(system, ref);
    expect(system.isAlive(ref)).toBe(false);
  });

  it('a reply can come later (async handler), and a call times out on the caller side', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    expect(await ask(system, ref, { sleep: 30 })).toBe('slept');
    const started = Date.now();
    const error = await ask(system, ref, 'never', 150).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallTimeout);
    expect((error as CallTimeout).target).toBe(ref);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(system.timerCount).toBe(0);
    await killAll(system, ref);
  });

  it('a callee that dies mid-call fails the call with CalleeExited and its real reason', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const error = (await ask(system, ref, { crash: 'boom in handler' }).catch((e: unknown) => e)) as CalleeExited;
    expect(error).toBeInstanceOf(CalleeExited);
    expect(error.target).toBe(ref);
    expect(error.reason).toBeInstanceOf(Error);
    expect((error.reason as Error).message).toBe('boom in handler');
    expect((error.reason as Error).stack).toContain('probe.ts');
    await eventually(() => !system.isAlive(ref));
    // The actor is gone: a new call is NoProc, a send is silent.
    await expect(ask(system, ref, 'ping')).rejects.toBeInstanceOf(NoProc);
    system.send(ref, 'into the void');
  });

  it('a call to an actor killed while the call waits fails with CalleeExited(killed)', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const pending = ask(system, ref, 'never', 5_000).catch((e: unknown) => e);
    expect(await ask(system, ref, 'ping')).toBe('pong');
    system.exit(ref, 'kill');
    const error = (await pending) as CalleeExited;
    expect(error).toBeInstanceOf(CalleeExited);
    expect(error.reason).toBe('killed');
    expect(system.timerCount).toBe(0);
  });

  it('a placed actor sends to and calls local actors', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const { ref: local, seen } = recorder(system);
    const server = system.spawn((message) => {
      if (message instanceof Object && 'reply' in message) (message as { reply(v: unknown): void }).reply('from main');
    });
    expect(await ask(system, ref, { send: local, message: { hello: ref } })).toBe('sent');
    await eventually(() => seen.length === 1);
    expect(seen[0]).toEqual({ hello: ref });
    expect((seen[0] as { hello: Ref }).hello).toBe(ref);
    expect(await ask(system, ref, { call: server, request: 'hi' })).toEqual({ reply: 'from main' });
    system.exit(server, 'kill');
    expect(await ask(system, ref, { call: server, request: 'hi' })).toMatchObject({ error: 'ACTOR_NOPROC' });
    await killAll(system, ref, local);
  });

  it('selective receive in a placed actor takes the matching message and keeps the rest in order', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    system.send(ref, { tag: 'a', n: 1 });
    system.send(ref, { tag: 'b', n: 2 });
    const selected = ask(system, ref, { selective: 'c', timeoutMs: 5_000 });
    system.send(ref, { tag: 'a', n: 3 });
    system.send(ref, { tag: 'c', n: 4 });
    expect(await selected).toEqual({ tag: 'c', n: 4 });
    expect(await ask(system, ref, 'log')).toEqual([
      { tag: 'a', n: 1 },
      { tag: 'b', n: 2 },
      { tag: 'a', n: 3 },
    ]);
    expect(await ask(system, ref, { selective: 'zzz', timeoutMs: 20 })).toBe('timeout');
    await killAll(system, ref);
  });

  it('payloads over the cap throw PayloadTooLarge naming the cap, both ways', async () => {
    const system = placementSystem({ payloadLimitBytes: 4_096 });
    const ref = await spawnProbe(system, placement);
    const big = 'x'.repeat(5_000);
    const thrown = (() => {
      try {
        system.send(ref, big);
      } catch (error) {
        return error;
      }
    })() as PayloadTooLarge;
    expect(thrown).toBeInstanceOf(PayloadTooLarge);
    expect(thrown.code).toBe('PLACEMENT_PAYLOAD_TOO_LARGE');
    expect(thrown.limitBytes).toBe(4_096);
    expect(thrown.message).toContain('payloadLimitBytes = 4096');
    await expect(ask(system, ref, { echo: big })).rejects.toBeInstanceOf(PayloadTooLarge);
    // A reply over the cap fails the call, typed; a send from inside the host throws there.
    await expect(ask(system, ref, { bigReply: 5_000 })).rejects.toMatchObject({ code: 'PLACEMENT_PAYLOAD_TOO_LARGE', limitBytes: 4_096 });
    const { ref: local } = recorder(system);
    expect(await ask(system, ref, { sendBig: local, bytes: 5_000 })).toEqual({ error: 'PLACEMENT_PAYLOAD_TOO_LARGE', limitBytes: 4_096 });
    // The host is still fine.
    expect(await ask(system, ref, 'ping')).toBe('pong');
    await killAll(system, ref, local);
  });

  it('registry names work across the boundary, both ways', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement, { name: 'placed-probe' });
    expect(system.whereis('placed-probe')).toBe(ref);
    expect(system.registered()).not.toContain('placed-probe');
    expect(await ask(system, 'placed-probe', 'ping')).toBe('pong');
    system.send('placed-probe', 'by name');
    expect(await ask(system, ref, 'log')).toEqual(['by name']);
    // Taken names are refused everywhere.
    expect(() => system.spawn(() => {}, { name: 'placed-probe' })).toThrow(/already registered/);
    await expect(spawnProbe(system, placement, { name: 'placed-probe' })).rejects.toMatchObject({ code: 'ACTOR_NAME_TAKEN' });

    // A name registered in the main system resolves inside the host, and one registered in the host from a handler resolves here.
    const { ref: local, seen } = recorder(system, { name: 'main-recorder' });
    expect(await ask(system, ref, { whereis: 'main-recorder' })).toBe(local);
    expect(await ask(system, ref, { send: 'main-recorder', message: 'hello main' })).toBe('sent');
    await eventually(() => seen.length === 1);
    expect(seen).toEqual(['hello main']);
    expect(await ask(system, ref, { call: 'no-such-name', request: 1 })).toMatchObject({ error: 'ACTOR_NOPROC' });
    const second = await spawnProbe(system, placement);
    expect(await ask(system, second, { register: 'late-name' })).toBe('registered');
    await eventually(() => system.whereis('late-name') === second);
    expect(await ask(system, 'late-name', 'ping')).toBe('pong');

    // Names are freed at exit, here too.
    await killAll(system, ref, second, local);
    await eventually(() => system.whereis('placed-probe') === undefined && system.whereis('late-name') === undefined);
    expect(() => system.send('placed-probe', 'x')).toThrow(NoProc);
  });
});

describe('messaging between two hosts (through the main system)', () => {
  it('a thread actor and a process actor send, call and name each other', async () => {
    const system = placementSystem();
    const inThread = await spawnProbe(system, 'thread', { name: 'in-thread' });
    const inProcess = await spawnProbe(system, 'process');
    const where = await Promise.all([ask(system, inThread, 'where'), ask(system, inProcess, 'where')]);
    expect(where[0]).toMatchObject({ pid: process.pid });
    expect((where[0] as { thread: number }).thread).toBeGreaterThan(0);
    expect((where[1] as { pid: number }).pid).not.toBe(process.pid);
    expect(await ask(system, inProcess, { call: inThread, request: { echo: [inProcess] } })).toEqual({ reply: [inProcess] });
    expect(await ask(system, inProcess, { call: 'in-thread', request: 'ping' })).toEqual({ reply: 'pong' });
    expect(await ask(system, inThread, { send: inProcess, message: 'across' })).toBe('sent');
    expect(await ask(system, inProcess, 'log')).toEqual(['across']);
    await killAll(system, inThread, inProcess);
  });
});

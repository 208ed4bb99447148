import { describe, expect, it } from 'vitest';
import {
  behaviourModule,
  InvalidPlacement,
  NoProc,
  PayloadTooLarge,
  PlacementFailed,
} from '../../../src/actors/index.js';
import { sleep } from '../../support/systems.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, placementSystem, probeModule, spawnProbe } from './support.js';

checkPlacementLeaks();

describe('spawnPlaced', () => {
  it('loop (the default) runs the module on this system', async () => {
    const system = placementSystem();
    const ref = await system.spawnPlaced(behaviourModule(probeModule, 'probe'));
    expect(ref.creation).toBe(system.creation);
    expect(system.info(ref)?.behaviour).toBe('probe');
    expect(await ask(system, ref, 'where')).toEqual({ pid: process.pid, thread: 0 });
    const pinger = await system.spawnPlaced(behaviourModule(probeModule.href, 'pinger'), { placement: 'loop', name: 'pinger' });
    expect(await system.call('pinger', 'anything')).toBe('pong');
    await killAll(system, ref, pinger);
    const failed = (await system.spawnPlaced(behaviourModule(probeModule, 'notABehaviour')).catch((e: unknown) => e)) as PlacementFailed;
    expect(failed).toBeInstanceOf(PlacementFailed);
    expect(failed.reason).toBeInstanceOf(InvalidPlacement);
    const initFailed = (await system
      .spawnPlaced(behaviourModule(probeModule, 'probe', { failInit: 'loop init fails' }), { name: 'loop-probe' })
      .catch((e: unknown) => e)) as PlacementFailed;
    expect((initFailed.reason as Error).message).toBe('loop init fails');
    expect(system.whereis('loop-probe')).toBeUndefined();
  });

  it('refuses what cannot be placed, typed', async () => {
    const system = placementSystem();
    expect(() => behaviourModule('./fixtures/probe.ts', 'probe')).toThrow(InvalidPlacement);
    expect(() => behaviourModule(probeModule, '')).toThrow(InvalidPlacement);
    const spec = behaviourModule(probeModule, 'probe');
    await expect(system.spawnPlaced(spec, { placement: 'cloud' as never })).rejects.toMatchObject({ code: 'PLACEMENT_INVALID', option: 'placement' });
    await expect(system.spawnPlaced(spec, { placement: 'loop', host: 'h' })).rejects.toBeInstanceOf(InvalidPlacement);
    await expect(system.spawnPlaced(spec, { placement: 'thread', maxHeapMb: 1 })).rejects.toMatchObject({ option: 'maxHeapMb' });
    await expect(system.spawnPlaced(spec, { placement: 'thread', mailbox: { capacity: -1 } })).rejects.toMatchObject({ code: 'ACTOR_INVALID_OPTION' });
    const dead = system.spawn(() => {});
    await killAll(system, dead);
    await expect(system.spawnPlaced(spec, { placement: 'thread', link: dead })).rejects.toBeInstanceOf(NoProc);
    await expect(
      system.spawnPlaced(behaviourModule(probeModule, 'probe', { failInit: 'x'.repeat(2_000_000) }), { placement: 'process' }),
    ).rejects.toBeInstanceOf(PayloadTooLarge);
  });

  describe.each(HOST_PLACEMENTS)('in a %s', (placement) => {
    it('rejects with PlacementFailed when the module, the export or init fails; the name is free again', async () => {
      const system = placementSystem();
      const missing = await system
        .spawnPlaced(behaviourModule(new URL('./fixtures/no-such-module.ts', import.meta.url), 'probe'), { placement })
        .catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(PlacementFailed);
      expect((missing as PlacementFailed).message).toContain('could not load');
      const notBehaviour = (await system
        .spawnPlaced(behaviourModule(probeModule, 'notABehaviour'), { placement })
        .catch((error: unknown) => error)) as PlacementFailed;
      expect(notBehaviour).toBeInstanceOf(PlacementFailed);
      expect((notBehaviour.reason as Error).name).toBe('InvalidPlacement');
      expect((notBehaviour.reason as Error & { code: string }).code).toBe('PLACEMENT_INVALID');
      const noExport = (await system
        .spawnPlaced(behaviourModule(probeModule, 'nothingHere'), { placement })
        .catch((error: unknown) => error)) as PlacementFailed;
      expect((noExport.reason as Error).message).toContain("no export 'nothingHere'");

      const { ref: linked } = (await import('../helpers.js')).recorder(system);
      const initFailed = (await spawnProbe(system, placement, { name: 'taken-once', link: linked }, { failInit: 'init says no' }).catch(
        (error: unknown) => error,
      )) as PlacementFailed;
      expect(initFailed).toBeInstanceOf(PlacementFailed);
      expect(initFailed.code).toBe('PLACEMENT_FAILED');
      expect((initFailed.reason as Error).message).toBe('init says no');
      // The starter was unlinked first: it lives on.
      expect(system.isAlive(linked)).toBe(true);
      expect(system.info(linked)?.links).toEqual([]);
      expect(system.whereis('taken-once')).toBeUndefined();
      const ref = await spawnProbe(system, placement, { name: 'taken-once' });
      expect(system.whereis('taken-once')).toBe(ref);
      await killAll(system, ref, linked);
    });

    it('inside a host, spawnPlaced runs loop actors there and refuses threads and processes', async () => {
      const system = placementSystem();
      const ref = await spawnProbe(system, placement);
      const local = (await ask(system, ref, { spawnPlaced: 'loop' })) as { child: { creation: number }; reply: string };
      expect(local.reply).toBe('pong');
      expect(local.child.creation).toBe(ref.creation);
      expect(await ask(system, ref, { spawnPlaced: 'thread' })).toEqual({ error: 'PLACEMENT_INVALID' });
      await killAll(system, ref);
    });

    it('honours trapExit and mailbox options in the host', async () => {
      const system = placementSystem();
      const ref = await spawnProbe(system, placement, { trapExit: true, mailbox: { capacity: 2, overflow: 'drop-newest' } });
      const busy = ask(system, ref, { sleep: 300 });
      // Real time, around real I/O: the call is being handled (its request no longer queued).
      await sleep(100);
      for (let n = 1; n <= 5; n++) system.send(ref, n);
      expect(await busy).toBe('slept');
      expect(await ask(system, ref, 'log')).toEqual([1, 2]);
      system.exit(ref, 'shutdown');
      const [exit] = (await ask(system, ref, 'log')) as unknown[];
      expect(exit).toMatchObject({ type: 'EXIT', reason: 'shutdown' });
      await killAll(system, ref);
    });
  });
});

import { describe, expect, it } from 'vitest';
import { MailboxFull, type ActorSystem, type OverflowPolicy, type Ref } from '../../../src/actors/index.js';
import { placementHub } from '../../../src/actors/placement/hub.js';
import { sleep } from '../../support/systems.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, placementSystem, spawnProbe, type HostPlacement } from './support.js';

checkPlacementLeaks();

/**
 * Each host channel has an in-flight budget. A send that does not fit follows the target mailbox's
 * overflow policy at the sender's side, so a sender in a tight loop can neither grow the main process
 * without bound nor bury the next call under a backlog.
 */
const MESSAGE = { payload: 'x'.repeat(100), n: 0 }; // about 130 bytes as a frame

async function placedWithMailbox(system: ActorSystem, placement: HostPlacement, overflow: OverflowPolicy): Promise<Ref> {
  return spawnProbe(system, placement, { mailbox: { capacity: 1_000, overflow } });
}

/** Sends `count` messages in one synchronous loop; returns the MailboxFull errors thrown. */
function flood(system: ActorSystem, ref: Ref, count: number): unknown[] {
  const refused: unknown[] = [];
  for (let n = 0; n < count; n++) {
    try {
      system.send(ref, { ...MESSAGE, n });
    } catch (error) {
      refused.push(error);
    }
  }
  return refused;
}

/** A call answered once the mailbox has room again (a full mailbox refuses calls at once). */
async function pingWhenDrained(system: ActorSystem, ref: Ref): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      expect(await ask(system, ref, 'ping', 10_000)).toBe('pong');
      return Date.now() - start;
    } catch (error) {
      if (!(error instanceof MailboxFull)) throw error;
      await sleep(20);
    }
  }
}

describe('backpressure across a placement boundary', () => {
  for (const placement of HOST_PLACEMENTS) {
    it(`${placement}: 300,000 sends to a 1,000-message drop-newest mailbox keep the main process bounded`, { timeout: 60_000 }, async () => {
      const system = placementSystem();
      const ref = await placedWithMailbox(system, placement, 'drop-newest');
      const hub = placementHub(system);
      const before = process.memoryUsage().rss;
      const refused = flood(system, ref, 300_000);
      const grown = (process.memoryUsage().rss - before) / 1_048_576;
      expect(refused).toEqual([]);
      // Before the budget: +340 MB (thread) and +440 MB (process), and the next call waited seconds.
      expect(grown).toBeLessThan(100);
      expect(hub.stats.messagesDropped).toBeGreaterThan(200_000);
      expect(await pingWhenDrained(system, ref)).toBeLessThan(15_000);
      await killAll(system, ref);
    });

    it(`${placement}: reject gives the sender MailboxFull naming the target's capacity, until the host catches up`, { timeout: 30_000 }, async () => {
      const system = placementSystem();
      const ref = await placedWithMailbox(system, placement, 'reject');
      const refused = flood(system, ref, 100_000);
      expect(refused.length).toBeGreaterThan(50_000);
      expect(refused[0]).toBeInstanceOf(MailboxFull);
      expect(refused[0]).toMatchObject({ code: 'ACTOR_MAILBOX_FULL', target: ref, capacity: 1_000 });
      await pingWhenDrained(system, ref);
      expect(flood(system, ref, 10)).toEqual([]);
      await killAll(system, ref);
    });

    it(`${placement}: drop-oldest drops at the boundary and counts`, { timeout: 30_000 }, async () => {
      const system = placementSystem();
      const ref = await placedWithMailbox(system, placement, 'drop-oldest');
      const hub = placementHub(system);
      expect(flood(system, ref, 100_000)).toEqual([]);
      expect(hub.stats.messagesDropped).toBeGreaterThan(50_000);
      await pingWhenDrained(system, ref);
      await killAll(system, ref);
    });
  }
});

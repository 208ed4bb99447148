import { describe, expect, it } from 'vitest';
import { CallRequest, MailboxFull, Ref, type KernelObserver } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';

describe('kernel robustness', () => {
  /** An actor busy in an async handler until released, with a one-message mailbox. */
  function blockedServer(system: ReturnType<typeof testSystem>, overflow: 'drop-newest' | 'drop-oldest') {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ref = system.spawn(
      async (message) => {
        if (message === 'block') await gate;
        if (message instanceof CallRequest) message.reply('ok');
      },
      { mailbox: { capacity: 1, overflow } },
    );
    system.send(ref, 'block');
    return { ref, release };
  }

  it('a call dropped by drop-newest fails at once with MailboxFull instead of timing out', async () => {
    const system = testSystem();
    const busy = blockedServer(system, 'drop-newest');
    await system.settle();
    system.send(busy.ref, 'filler');
    const started = Date.now();
    await expect(system.call(busy.ref, 'x', 60_000)).rejects.toBeInstanceOf(MailboxFull);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(system.info(busy.ref)?.messagesDropped).toBe(1);
    busy.release();
    system.exit(busy.ref, 'kill');
  });

  it('a call dropped by drop-oldest fails at once with MailboxFull', async () => {
    const system = testSystem();
    const busy = blockedServer(system, 'drop-oldest');
    await system.settle();
    const first = system.call(busy.ref, 'first', 60_000);
    system.send(busy.ref, 'newer');
    await expect(first).rejects.toMatchObject({ code: 'ACTOR_MAILBOX_FULL' });
    busy.release();
    system.exit(busy.ref, 'kill');
  });

  it('an observer hook or exit watcher that throws does not stop exit propagation', async () => {
    const observer: KernelObserver = {
      spawned: () => {
        throw new Error('observer broke on spawn');
      },
      exited: () => {
        throw new Error('observer broke on exit');
      },
    };
    const system = testSystem({ observer });
    const a = system.spawn(() => undefined);
    const b = system.spawn(() => undefined, { link: a });
    system.watch(a, () => {
      throw new Error('watcher broke');
    });
    const bExited = system.exited(b);
    system.exit(a, 'shutdown');
    expect(await bExited).toBe('shutdown');
    expect(system.actorCount).toBe(0);
    expect(system.hookFailures).toBe(2 + 2 + 1);
  });

  it('a ref rebuilt from its parts reaches the live actor; one of another creation does not', async () => {
    const system = testSystem();
    const seen: unknown[] = [];
    const ref = system.spawn((message) => void seen.push(message));
    system.send(new Ref(ref.node, ref.id, ref.creation), 'copy');
    system.send(new Ref(ref.node, ref.id, ref.creation + 1), 'stale');
    await system.settle();
    expect(seen).toEqual(['copy']);
    system.exit(ref, 'kill');
  });
});

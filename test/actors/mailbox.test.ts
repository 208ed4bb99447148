import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallRequest,
  DEFAULT_MAILBOX_CAPACITY,
  DownMessage,
  ExitMessage,
  InvalidOption,
  MAX_MAILBOX_CAPACITY,
  MailboxFull,
  type OverflowPolicy,
} from '../../src/actors/index.js';
import { RingQueue } from '../../src/actors/ring-queue.js';
import { testSystem } from '../support/systems.js';
import { recorder } from './helpers.js';

describe('mailbox capacity', () => {
  it('defaults to 100,000 messages, capped at 10,000,000', () => {
    expect(DEFAULT_MAILBOX_CAPACITY).toBe(100_000);
    expect(MAX_MAILBOX_CAPACITY).toBe(10_000_000);
    const system = testSystem();
    const plain = system.spawn(() => {});
    const big = system.spawn(() => {}, { mailbox: { capacity: 10_000_000 } });
    const small = system.spawn(() => {}, { mailbox: { capacity: 1 } });
    expect(system.info(plain)?.mailboxCapacity).toBe(100_000);
    expect(system.info(big)?.mailboxCapacity).toBe(10_000_000);
    expect(system.info(small)?.mailboxCapacity).toBe(1);
    for (const ref of [plain, big, small]) system.exit(ref, 'kill');
  });

  it('enforces the default capacity: message 100,001 is refused', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system);
    // Sends in one synchronous run: the actor cannot handle anything in between.
    for (let i = 0; i < 100_000; i++) system.send(ref, i);
    expect(system.info(ref)?.mailboxLength).toBe(100_000);
    expect(() => system.send(ref, 'one too many')).toThrow(MailboxFull);
    await system.settle();
    expect(seen.length).toBe(100_000);
    expect(seen[99_999]).toBe(99_999);
    expect(system.info(ref)?.messagesDropped).toBe(0);
    system.exit(ref, 'kill');
  });

  it.each([0, -1, 1.5, Number.NaN, 10_000_001, Number.POSITIVE_INFINITY])(
    'rejects capacity %s with InvalidOption naming mailbox.capacity',
    (capacity) => {
      const system = testSystem();
      let thrown: unknown;
      try {
        system.spawn(() => {}, { mailbox: { capacity } });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidOption);
      expect((thrown as InvalidOption).option).toBe('mailbox.capacity');
      expect((thrown as InvalidOption).code).toBe('ACTOR_INVALID_OPTION');
      expect((thrown as InvalidOption).message).toContain('mailbox.capacity');
      expect(system.actorCount).toBe(0);
    },
  );

  it('rejects an unknown overflow policy with InvalidOption naming mailbox.overflow', () => {
    const system = testSystem();
    expect(() => system.spawn(() => {}, { mailbox: { overflow: 'drop-all' as OverflowPolicy } })).toThrow(
      expect.objectContaining({ option: 'mailbox.overflow' }),
    );
    expect(system.actorCount).toBe(0);
  });
});

describe('overflow policies', () => {
  it('reject (the default): the sender gets a typed MailboxFull and the message is not queued', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { mailbox: { capacity: 3 } });
    system.send(ref, 1);
    system.send(ref, 2);
    system.send(ref, 3);
    let thrown: unknown;
    try {
      system.send(ref, 4);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MailboxFull);
    const full = thrown as MailboxFull;
    expect(full.code).toBe('ACTOR_MAILBOX_FULL');
    expect(full.target).toBe(ref);
    expect(full.capacity).toBe(3);
    expect(full.message).toContain('mailbox.capacity');
    await system.settle();
    expect(seen).toEqual([1, 2, 3]);
    // Room again once the actor has caught up.
    system.send(ref, 5);
    await system.settle();
    expect(seen).toEqual([1, 2, 3, 5]);
    expect(system.info(ref)?.messagesDropped).toBe(0);
    system.exit(ref, 'kill');
  });

  it('reject: a sending actor that does not catch MailboxFull exits with it', async () => {
    const system = testSystem();
    const target = system.spawn(() => {}, { mailbox: { capacity: 1 } });
    const sender = system.spawn((_message: unknown, ctx) => {
      ctx.send(target, 'a');
      ctx.send(target, 'b');
    });
    const exited = system.exited(sender);
    system.send(sender, 'go');
    expect(await exited).toBeInstanceOf(MailboxFull);
    expect(system.isAlive(target)).toBe(true);
    system.exit(target, 'kill');
  });

  it('reject: a call to a full mailbox fails with MailboxFull', async () => {
    const system = testSystem();
    const target = system.spawn(() => {}, { mailbox: { capacity: 1 } });
    system.send(target, 'filler');
    await expect(system.call(target, 'request')).rejects.toBeInstanceOf(MailboxFull);
    expect(system.timerCount).toBe(0);
    system.exit(target, 'kill');
  });

  it('drop-oldest keeps the newest messages and counts the drops', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { mailbox: { capacity: 3, overflow: 'drop-oldest' } });
    for (let i = 1; i <= 5; i++) expect(() => system.send(ref, i)).not.toThrow();
    expect(system.info(ref)?.mailboxLength).toBe(3);
    expect(system.info(ref)?.messagesDropped).toBe(2);
    await system.settle();
    expect(seen).toEqual([3, 4, 5]);
    system.exit(ref, 'kill');
  });

  it('drop-newest keeps the oldest messages and counts the drops', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { mailbox: { capacity: 3, overflow: 'drop-newest' } });
    for (let i = 1; i <= 5; i++) expect(() => system.send(ref, i)).not.toThrow();
    expect(system.info(ref)?.messagesDropped).toBe(2);
    await system.settle();
    expect(seen).toEqual([1, 2, 3]);
    system.exit(ref, 'kill');
  });

  it('drops accumulate over the actor lifetime', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { mailbox: { capacity: 2, overflow: 'drop-newest' } });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) system.send(ref, round * 10 + i);
      await system.settle();
    }
    expect(seen).toEqual([0, 1, 10, 11, 20, 21]);
    expect(system.info(ref)?.messagesDropped).toBe(9);
    expect(system.info(ref)?.messagesHandled).toBe(6);
    system.exit(ref, 'kill');
  });
});

describe('kernel signals and a full mailbox', () => {
  it.each<OverflowPolicy>(['reject', 'drop-newest', 'drop-oldest'])(
    '%s: EXIT and DOWN signals are never refused or dropped',
    async (overflow) => {
      const system = testSystem();
      const { ref, seen } = recorder(system, { mailbox: { capacity: 2, overflow }, trapExit: true });
      const linked = system.spawn(() => {}, { link: ref });
      const monitored = system.spawn(() => {});
      const watcher = system.spawn<unknown>((message, ctx) => {
        if (message === 'watch') ctx.monitor(monitored);
        else seen.push(message);
      }, { mailbox: { capacity: 1, overflow } });
      system.send(watcher, 'watch');
      await system.settle();

      system.send(ref, 'u1');
      system.send(ref, 'u2'); // full now
      system.send(watcher, 'w1'); // full now
      system.exit(linked, 'shutdown'); // EXIT to the trapping recorder
      system.exit(monitored, 'kill'); // DOWN to the watcher
      expect(system.info(ref)?.mailboxLength).toBe(3);
      expect(system.info(watcher)?.mailboxLength).toBe(2);
      // More user messages after the signals: whatever the policy drops, it is never a signal.
      for (let i = 0; i < 3; i++) {
        for (const target of [ref, watcher]) {
          try {
            system.send(target, 'late');
          } catch (error) {
            expect(overflow).toBe('reject');
            expect(error).toBeInstanceOf(MailboxFull);
          }
        }
      }
      await system.settle();
      const exits = seen.filter((m) => m instanceof ExitMessage) as ExitMessage[];
      const downs = seen.filter((m) => m instanceof DownMessage) as DownMessage[];
      expect(exits.map((m) => [m.from, m.reason])).toEqual([[linked, 'shutdown']]);
      expect(downs.map((m) => [m.ref, m.reason])).toEqual([[monitored, 'killed']]);
      for (const r of [ref, watcher]) system.exit(r, 'kill');
    },
  );

  it('drop-oldest drops the oldest user message, not an older queued signal', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { mailbox: { capacity: 3, overflow: 'drop-oldest' }, trapExit: true });
    const linked = system.spawn(() => {}, { link: ref });
    system.exit(linked, 'shutdown'); // EXIT queued first
    system.send(ref, 1);
    system.send(ref, 2);
    system.send(ref, 3);
    await system.settle();
    expect(seen[0]).toBeInstanceOf(ExitMessage);
    expect(seen.slice(1)).toEqual([2, 3]);
    expect(system.info(ref)?.messagesDropped).toBe(1);
    system.exit(ref, 'kill');
  });

  it('a call dropped by overflow fails at once with MailboxFull: its caller neither hangs nor waits out the timeout', async () => {
    const system = testSystem({ callTimeoutMs: 60_000 });
    const server = system.spawn((message: unknown) => {
      if (message instanceof CallRequest) message.reply('ok');
    }, { mailbox: { capacity: 1, overflow: 'drop-newest' } });
    system.send(server, 'filler');
    const call = system.call(server, 'dropped');
    await expect(call).rejects.toMatchObject({ code: 'ACTOR_MAILBOX_FULL' });
    expect(system.timerCount).toBe(0);
    expect(system.info(server)?.messagesDropped).toBe(1);
    system.exit(server, 'kill');
  });
});

describe('RingQueue (the mailbox storage)', () => {
  it('is FIFO across growth and wrap-around', () => {
    const queue = new RingQueue<number>();
    const model: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 7; i++) {
        queue.push(next);
        model.push(next++);
      }
      for (let i = 0; i < 5; i++) expect(queue.shift()).toBe(model.shift());
      expect(queue.length).toBe(model.length);
    }
    while (model.length > 0) expect(queue.shift()).toBe(model.shift());
    expect(queue.shift()).toBeUndefined();
  });

  it('behaves like an array under push, shift, findIndex and removeAt (property)', () => {
    type Op = { kind: 'push'; value: number } | { kind: 'shift' } | { kind: 'remove'; at: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.integer({ min: 0, max: 1000 }).map((value) => ({ kind: 'push' as const, value })),
      fc.constant({ kind: 'shift' as const }),
      fc.nat(40).map((at) => ({ kind: 'remove' as const, at })),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const queue = new RingQueue<number>();
        const model: number[] = [];
        for (const step of ops) {
          if (step.kind === 'push') {
            queue.push(step.value);
            model.push(step.value);
          } else if (step.kind === 'shift') {
            expect(queue.shift()).toBe(model.shift());
          } else if (model.length > 0) {
            const at = step.at % model.length;
            expect(queue.findIndex((v) => v === model[at])).toBe(model.indexOf(model[at]!));
            expect(queue.removeAt(at)).toBe(model.splice(at, 1)[0]);
          }
          expect(queue.length).toBe(model.length);
        }
        const drained: number[] = [];
        for (let v = queue.shift(); v !== undefined; v = queue.shift()) drained.push(v);
        expect(drained).toEqual(model);
      }),
    );
  });
});

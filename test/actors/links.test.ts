import { describe, expect, it } from 'vitest';
import { ExitMessage, shutdownWith, type Ref } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { deferred, exitLog, recorder } from './helpers.js';

describe('links', () => {
  it('are bidirectional and visible in process info on both sides', async () => {
    const system = testSystem();
    const a = system.spawn(() => {});
    const b = system.spawn<string>((message, ctx) => {
      if (message === 'link') ctx.link(a);
      if (message === 'unlink') ctx.unlink(a);
    });
    system.send(b, 'link');
    await system.settle();
    expect(system.info(a)?.links).toEqual([b]);
    expect(system.info(b)?.links).toEqual([a]);
    system.send(b, 'link'); // idempotent
    await system.settle();
    expect(system.info(a)?.links).toEqual([b]);
    system.send(b, 'unlink');
    await system.settle();
    expect(system.info(a)?.links).toEqual([]);
    expect(system.info(b)?.links).toEqual([]);
    system.exit(a, 'kill');
    system.exit(b, 'kill');
  });

  it('a crash takes down a linked non-trapping actor with the same reason, in either direction', () => {
    const system = testSystem();
    const boom = new Error('boom');
    const parent = system.spawn(() => {});
    const child = system.spawn(() => {}, { link: parent });
    const exits = exitLog(system, parent, child);
    system.exit(child, boom);
    expect(exits.get(child)).toBe(boom);
    expect(exits.get(parent)).toBe(boom);

    const left = system.spawn(() => {});
    const right = system.spawn(() => {}, { link: left });
    const more = exitLog(system, left, right);
    system.exit(left, 'shutdown');
    expect(more.get(right)).toBe('shutdown');
  });

  it('a crashing handler (sync or async) takes its linked actors with it', async () => {
    const system = testSystem();
    const syncError = new Error('sync');
    const asyncError = new Error('async');
    const syncCrasher = system.spawn(() => {
      throw syncError;
    });
    const asyncCrasher = system.spawn(async () => {
      await Promise.resolve();
      throw asyncError;
    });
    const a = system.spawn(() => {}, { link: syncCrasher });
    const b = system.spawn(() => {}, { link: asyncCrasher });
    const exits = exitLog(system, a, b);
    system.send(syncCrasher, 'go');
    system.send(asyncCrasher, 'go');
    await system.exited(b);
    expect(exits.get(a)).toBe(syncError);
    expect(exits.get(b)).toBe(asyncError);
  });

  it('a normal exit does not take down a linked non-trapping actor', async () => {
    const system = testSystem();
    const survivor = system.spawn(() => {});
    const quitter = system.spawn<string>((_message, ctx) => ctx.stop(), { link: survivor });
    system.send(quitter, 'stop');
    expect(await system.exited(quitter)).toBe('normal');
    await system.settle();
    expect(system.isAlive(survivor)).toBe(true);
    expect(system.info(survivor)?.links).toEqual([]);
    system.exit(survivor, 'kill');
  });

  it('a trapping actor receives EXIT messages instead of dying, normal ones included', async () => {
    const system = testSystem();
    const { ref: trapper, seen } = recorder(system, { trapExit: true });
    const crasher = system.spawn(() => {}, { link: trapper });
    const quitter = system.spawn<string>((_message, ctx) => ctx.stop(), { link: trapper });
    const detailed = system.spawn(() => {}, { link: trapper });
    system.exit(crasher, new Error('crash'));
    system.send(quitter, 'stop');
    await system.exited(quitter);
    system.exit(detailed, shutdownWith({ why: 'maintenance' }));
    await system.settle();
    expect(system.isAlive(trapper)).toBe(true);
    expect(seen.every((m) => m instanceof ExitMessage)).toBe(true);
    const exits = seen as ExitMessage[];
    expect(exits.map((m) => m.from)).toEqual([crasher, quitter, detailed]);
    expect((exits[0]!.reason as Error).message).toBe('crash');
    expect(exits[1]!.reason).toBe('normal');
    expect(exits[2]!.reason).toEqual({ shutdown: { why: 'maintenance' } });
    expect(system.info(trapper)?.links).toEqual([]);
    system.exit(trapper, 'kill');
  });

  it('trapping can be switched on and off at run time', async () => {
    const system = testSystem();
    const actor = system.spawn<string>((message, ctx) => ctx.trapExit(message === 'trap'));
    const first = system.spawn(() => {}, { link: actor });
    const second = system.spawn(() => {}, { link: actor });
    system.send(actor, 'trap');
    await system.settle();
    expect(system.info(actor)?.trapExit).toBe(true);
    system.exit(first, 'shutdown');
    await system.settle();
    expect(system.isAlive(actor)).toBe(true);
    system.send(actor, 'no-trap');
    await system.settle();
    expect(system.info(actor)?.trapExit).toBe(false);
    const exits = exitLog(system, actor);
    system.exit(second, 'shutdown');
    expect(exits.get(actor)).toBe('shutdown');
  });

  it('kill through a link is seen as killed: it kills non-trapping links, trapping ones get EXIT killed', async () => {
    const system = testSystem();
    const victim = system.spawn(() => {});
    const plain = system.spawn(() => {}, { link: victim });
    const { ref: trapper, seen } = recorder(system, { trapExit: true, link: victim });
    const exits = exitLog(system, victim, plain);
    system.exit(victim, 'kill');
    expect(exits.get(victim)).toBe('killed');
    expect(exits.get(plain)).toBe('killed');
    await system.settle();
    expect(seen).toHaveLength(1);
    expect((seen[0] as ExitMessage).reason).toBe('killed');
    expect((seen[0] as ExitMessage).from).toBe(victim);
    // A killed link is trappable: the trapper lives on.
    expect(system.isAlive(trapper)).toBe(true);
    system.exit(trapper, 'kill');
  });

  it('unlink stops propagation', async () => {
    const system = testSystem();
    const a = system.spawn(() => {});
    const b = system.spawn<string>((_m, ctx) => ctx.unlink(a), { link: a });
    system.send(b, 'unlink');
    await system.settle();
    system.exit(a, new Error('x'));
    expect(system.isAlive(b)).toBe(true);
    system.exit(b, 'kill');
  });

  it('linking to a dead actor: a non-trapping caller exits with noproc', async () => {
    const system = testSystem();
    const dead = system.spawn(() => {});
    system.exit(dead, 'kill');
    const linker = system.spawn<string>((_m, ctx) => ctx.link(dead));
    const exited = system.exited(linker);
    system.send(linker, 'link');
    expect(await exited).toBe('noproc');
  });

  it('linking to a dead actor: a trapping caller receives EXIT noproc', async () => {
    const system = testSystem();
    const dead = system.spawn(() => {});
    system.exit(dead, 'kill');
    const seen: unknown[] = [];
    const linker = system.spawn<unknown>(
      (message, ctx) => {
        if (message === 'link') ctx.link(dead);
        else seen.push(message);
      },
      { trapExit: true },
    );
    system.send(linker, 'link');
    await system.settle();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(ExitMessage);
    expect((seen[0] as ExitMessage).from).toBe(dead);
    expect((seen[0] as ExitMessage).reason).toBe('noproc');
    expect(system.info(linker)?.links).toEqual([]);
    system.exit(linker, 'kill');
  });

  it('spawning with a link to a dead actor throws NoProc and spawns nothing', () => {
    const system = testSystem();
    const dead = system.spawn(() => {});
    system.exit(dead, 'kill');
    expect(() => system.spawn(() => {}, { link: dead })).toThrow(expect.objectContaining({ code: 'ACTOR_NOPROC' }));
    expect(system.actorCount).toBe(0);
  });

  it('linking to itself does nothing', async () => {
    const system = testSystem();
    const self = system.spawn<string>((_m, ctx) => ctx.link(ctx.self));
    system.send(self, 'link');
    await system.settle();
    expect(system.info(self)?.links).toEqual([]);
    system.exit(self, 'kill');
  });

  it('spawnLink links parent and child; the child crash reaches the parent', async () => {
    const system = testSystem();
    let child: Ref | undefined;
    const parent = system.spawn<string>((message, ctx) => {
      if (message === 'spawn')
        child = ctx.spawnLink<string>(() => {
          throw new Error('child failed');
        });
    });
    system.send(parent, 'spawn');
    await system.settle();
    expect(system.info(parent)?.links).toEqual([child]);
    expect(system.info(child!)?.parent).toBe(parent);
    const exited = system.exited(parent);
    system.send(child!, 'crash');
    expect(((await exited) as Error).message).toBe('child failed');
  });

  it('a chain of 100,000 linked actors dies without overflowing the stack', () => {
    const system = testSystem();
    const count = 100_000;
    const first = system.spawn(() => {});
    let last = first;
    for (let i = 1; i < count; i++) last = system.spawn(() => {}, { link: last });
    expect(system.actorCount).toBe(count);
    const exits = exitLog(system, first, last);
    const reason = new Error('head of the chain failed');
    system.exit(last, reason);
    expect(system.actorCount).toBe(0);
    expect(exits.get(first)).toBe(reason);
    expect(exits.get(last)).toBe(reason);
  });

  it('a chain of 100,000 linked actors killed with kill: every one sees killed', () => {
    const system = testSystem();
    const count = 100_000;
    const refs: Ref[] = [system.spawn(() => {})];
    for (let i = 1; i < count; i++) refs.push(system.spawn(() => {}, { link: refs[i - 1] }));
    const exits = exitLog(system, refs[0]!, refs[count / 2]!, refs[count - 1]!);
    system.exit(refs[0]!, 'kill');
    expect(system.actorCount).toBe(0);
    expect([...exits.values()]).toEqual(['killed', 'killed', 'killed']);
  });


  it('a handler that outlived its actor leaves no stale link or monitor on others', async () => {
    const system = testSystem();
    const other = system.spawn(() => {});
    const gate = deferred();
    const ref = system.spawn<unknown>(async (_message, ctx) => {
      await gate.promise;
      ctx.link(other);
      ctx.monitor(other);
    });
    system.send(ref, 'go');
    await system.settle();
    system.exit(ref, 'kill');
    gate.resolve();
    await gate.promise;
    await system.settle();
    expect(system.info(other)?.links).toEqual([]);
    expect(system.info(other)?.monitoredBy).toEqual([]);
    expect(system.isAlive(other)).toBe(true);
    system.exit(other, 'kill');
  });
});

import { describe, expect, it } from 'vitest';
import { AlreadyNamed, InvalidOption, NameTaken, NoProc } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { deferred, recorder } from './helpers.js';

describe('registry', () => {
  it('register, whereis, send by name, unregister', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system);
    expect(system.whereis('logger')).toBeUndefined();
    system.register('logger', ref);
    expect(system.whereis('logger')).toBe(ref);
    expect(system.info(ref)?.name).toBe('logger');
    expect(system.info('logger')?.ref).toBe(ref);
    expect(system.registered()).toEqual(['logger']);
    system.send('logger', 'hello');
    await system.settle();
    expect(seen).toEqual(['hello']);

    expect(system.unregister('logger')).toBe(true);
    expect(system.unregister('logger')).toBe(false);
    expect(system.whereis('logger')).toBeUndefined();
    expect(system.info(ref)?.name).toBeUndefined();
    expect(() => system.send('logger', 'lost')).toThrow(NoProc);
    // The actor itself is untouched and may take a name again.
    system.register('logger2', ref);
    expect(system.whereis('logger2')).toBe(ref);
    system.exit(ref, 'kill');
  });

  it('spawn with a name registers before the actor runs', async () => {
    const system = testSystem();
    let seenName: string | undefined;
    const ref = system.spawn({
      init(ctx) {
        seenName = ctx.system.info(ctx.self)?.name;
      },
      handle() {},
    }, { name: 'early' });
    expect(system.whereis('early')).toBe(ref);
    await system.settle();
    expect(seenName).toBe('early');
    system.exit(ref, 'kill');
  });

  it('an actor can register itself', async () => {
    const system = testSystem();
    const ref = system.spawn<string>((message, ctx) => ctx.register(message as string));
    system.send(ref, 'me');
    await system.settle();
    expect(system.whereis('me')).toBe(ref);
    system.exit(ref, 'kill');
  });

  it('a taken name throws NameTaken, naming the holder', () => {
    const system = testSystem();
    const holder = system.spawn(() => {}, { name: 'svc' });
    const other = system.spawn(() => {});
    let thrown: unknown;
    try {
      system.register('svc', other);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NameTaken);
    expect((thrown as NameTaken).code).toBe('ACTOR_NAME_TAKEN');
    expect((thrown as NameTaken).registeredName).toBe('svc');
    expect((thrown as NameTaken).holder).toBe(holder);
    expect(system.whereis('svc')).toBe(holder);
    expect(system.info(other)?.name).toBeUndefined();
    system.exit(holder, 'kill');
    system.exit(other, 'kill');
  });

  it('spawning under a taken name throws NameTaken and spawns nothing', () => {
    const system = testSystem();
    const holder = system.spawn(() => {}, { name: 'svc' });
    expect(() => system.spawn(() => {}, { name: 'svc' })).toThrow(NameTaken);
    expect(system.actorCount).toBe(1);
    system.exit(holder, 'kill');
  });

  it('an actor holds at most one name (AlreadyNamed)', () => {
    const system = testSystem();
    const ref = system.spawn(() => {}, { name: 'first' });
    let thrown: unknown;
    try {
      system.register('second', ref);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AlreadyNamed);
    expect((thrown as AlreadyNamed).code).toBe('ACTOR_ALREADY_NAMED');
    expect((thrown as AlreadyNamed).existingName).toBe('first');
    expect(system.whereis('second')).toBeUndefined();
    expect(system.registered()).toEqual(['first']);
    system.exit(ref, 'kill');
  });

  it('names are freed when the actor exits, however it exits', async () => {
    const system = testSystem();
    const killed = system.spawn(() => {}, { name: 'a' });
    const crashed = system.spawn(() => {
      throw new Error('x');
    }, { name: 'b' });
    const stopped = system.spawn<string>((_m, ctx) => ctx.stop(), { name: 'c' });
    system.exit(killed, 'kill');
    system.send('b', 'crash');
    system.send('c', 'stop');
    await system.exited(crashed);
    await system.exited(stopped);
    expect(system.registered()).toEqual([]);
    for (const name of ['a', 'b', 'c']) {
      expect(system.whereis(name)).toBeUndefined();
      expect(() => system.send(name, 'x')).toThrow(NoProc);
    }
    // A new actor can take a freed name at once.
    const again = system.spawn(() => {}, { name: 'a' });
    expect(system.whereis('a')).toBe(again);
    system.exit(again, 'kill');
  });

  it('registering a dead actor throws NoProc', () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    system.exit(ref, 'kill');
    expect(() => system.register('ghost', ref)).toThrow(NoProc);
    expect(system.whereis('ghost')).toBeUndefined();
  });

  it('an empty name is an invalid option', () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    expect(() => system.register('', ref)).toThrow(InvalidOption);
    expect(() => system.spawn(() => {}, { name: '' })).toThrow(InvalidOption);
    expect(system.actorCount).toBe(1);
    system.exit(ref, 'kill');
  });

  it('a call by name reaches the registered actor; an unknown name rejects with NoProc', async () => {
    const system = testSystem();
    const ref = system.spawn((message: unknown) => {
      if (typeof message === 'object' && message !== null && 'reply' in message)
        (message as { reply(v: unknown): void }).reply('pong');
    }, { name: 'pinger' });
    expect(await system.call('pinger', 'ping')).toBe('pong');
    await expect(system.call('nobody', 'ping')).rejects.toBeInstanceOf(NoProc);
    system.exit(ref, 'kill');
  });


  it('a handler that outlived its actor cannot register a name that would never be freed', async () => {
    const system = testSystem();
    const gate = deferred();
    let thrown: unknown;
    const ref = system.spawn<unknown>(async (_message, ctx) => {
      await gate.promise;
      try {
        ctx.register('zombie');
      } catch (error) {
        thrown = error;
      }
    });
    system.send(ref, 'go');
    await system.settle();
    system.exit(ref, 'kill');
    gate.resolve();
    await gate.promise;
    await system.settle();
    expect(thrown).toBeInstanceOf(NoProc);
    expect(system.whereis('zombie')).toBeUndefined();
    const next = system.spawn(() => {}, { name: 'zombie' });
    system.exit(next, 'kill');
  });
});

import { describe, expect, it } from 'vitest';
import {
  ActorCrashed,
  ExitMessage,
  formatReason,
  isCleanExit,
  isShutdownWith,
  shutdownWith,
  type ExitReason,
} from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { deferred, exitLog, recorder } from './helpers.js';

describe('exit reasons', () => {
  it('stop() exits normal; stop(reason) exits with that reason', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = ['normal', 'shutdown', shutdownWith({ code: 3 })];
    const refs = reasons.map((reason) => system.spawn<string>((_m, ctx) => ctx.stop(reason === 'normal' ? undefined : reason)));
    const exits = exitLog(system, ...refs);
    for (const ref of refs) system.send(ref, 'stop');
    await system.settle();
    expect(refs.map((ref) => exits.get(ref))).toEqual(['normal', 'shutdown', { shutdown: { code: 3 } }]);
  });

  it('shutdownWith carries its detail; clean exits are normal, shutdown and {shutdown, _}', () => {
    const reason = shutdownWith({ why: 'drain' });
    expect(reason).toEqual({ shutdown: { why: 'drain' } });
    expect(isShutdownWith(reason)).toBe(true);
    expect(isShutdownWith('shutdown')).toBe(false);
    expect(isShutdownWith(new Error('x'))).toBe(false);
    expect(isCleanExit('normal')).toBe(true);
    expect(isCleanExit('shutdown')).toBe(true);
    expect(isCleanExit(reason)).toBe(true);
    expect(isCleanExit('killed')).toBe(false);
    expect(isCleanExit('noproc')).toBe(false);
    expect(isCleanExit(new Error('x'))).toBe(false);
    expect(formatReason(reason)).toBe('{shutdown, {"why":"drain"}}');
    expect(formatReason(new TypeError('bad'))).toBe('TypeError: bad');
    expect(formatReason('killed')).toBe('killed');
  });

  it('formatReason shows the name, code and message of every error inside a reason', () => {
    const init = Object.assign(new Error('DATABASE_URL is not set'), { code: 'CONFIG_MISSING' });
    // What a supervisor stops with when a child's init throws.
    const reason = shutdownWith({ failedToStartChild: 'db', reason: init });
    expect(formatReason(reason)).toBe(
      '{shutdown, {"failedToStartChild":"db","reason":{"name":"Error","code":"CONFIG_MISSING","message":"DATABASE_URL is not set"}}}',
    );
    const nested = shutdownWith([new RangeError('too big', { cause: new ActorCrashed('thrown') }), 7n]);
    expect(formatReason(nested)).toBe(
      '{shutdown, [{"name":"RangeError","message":"too big","cause":{"name":"ActorCrashed","code":"ACTOR_CRASHED","message":"' +
        new ActorCrashed('thrown').message +
        '"}},"7n"]}',
    );
    expect(formatReason(new ActorCrashed('thrown'))).toMatch(/^ActorCrashed \[ACTOR_CRASHED\]: /);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(formatReason(shutdownWith(cyclic))).toBe('{shutdown, [object Object]}');
  });

  it('a message after stop() in the same handler is not handled; stop takes effect after the callback', async () => {
    const system = testSystem();
    const log: string[] = [];
    const ref = system.spawn<string>((message, ctx) => {
      log.push(message as string);
      if (message === 'stop') {
        ctx.stop('shutdown');
        log.push('still in the callback');
      }
    });
    system.send(ref, 'one');
    system.send(ref, 'stop');
    system.send(ref, 'never');
    const reason = await system.exited(ref);
    expect(reason).toBe('shutdown');
    expect(log).toEqual(['one', 'stop', 'still in the callback']);
  });

  it('a handler that throws exits its actor with that very error', async () => {
    const system = testSystem();
    const error = new RangeError('sync failure');
    const ref = system.spawn(() => {
      throw error;
    });
    const exited = system.exited(ref);
    system.send(ref, 'go');
    expect(await exited).toBe(error);
  });

  it('an async handler that rejects exits its actor with that very error', async () => {
    const system = testSystem();
    const error = new Error('async failure');
    const gate = deferred();
    const ref = system.spawn(async () => {
      await gate.promise;
      throw error;
    });
    const exited = system.exited(ref);
    system.send(ref, 'go');
    await system.settle();
    expect(system.isAlive(ref)).toBe(true);
    gate.resolve();
    expect(await exited).toBe(error);
  });

  it('a thrown non-Error is wrapped in ActorCrashed, keeping the value', async () => {
    const system = testSystem();
    const ref = system.spawn(() => {
      throw { code: 42 };
    });
    const exited = system.exited(ref);
    system.send(ref, 'go');
    const reason = await exited;
    expect(reason).toBeInstanceOf(ActorCrashed);
    expect((reason as ActorCrashed).thrown).toEqual({ code: 42 });
    expect((reason as ActorCrashed).code).toBe('ACTOR_CRASHED');
  });

  it('a crash is not the sender problem: send returns normally and queued messages are dropped', async () => {
    const system = testSystem();
    const handled: string[] = [];
    const ref = system.spawn<string>((message) => {
      handled.push(message as string);
      if (message === 'crash') throw new Error('x');
    });
    expect(() => {
      system.send(ref, 'crash');
      system.send(ref, 'after');
    }).not.toThrow();
    await system.exited(ref);
    expect(handled).toEqual(['crash']);
  });

  it('a throwing init exits the actor with the error before any message', async () => {
    const system = testSystem();
    const error = new Error('init failed');
    const handled: unknown[] = [];
    const ref = system.spawn({
      init() {
        throw error;
      },
      handle(_ctx, message) {
        handled.push(message);
      },
    });
    system.send(ref, 'm');
    expect(await system.exited(ref)).toBe(error);
    expect(handled).toEqual([]);
  });
});

describe('terminate', () => {
  it('runs with the reason when the actor stops itself or crashes', async () => {
    const system = testSystem();
    const seen: ExitReason[] = [];
    const behaviour = {
      handle(ctx: { stop(reason?: ExitReason): void }, message: unknown) {
        if (message === 'stop') ctx.stop(shutdownWith('done'));
        if (message === 'crash') throw new Error('crashed');
      },
      terminate(_ctx: unknown, reason: ExitReason) {
        seen.push(reason);
      },
    };
    const a = system.spawn(behaviour);
    const b = system.spawn(behaviour);
    system.send(a, 'stop');
    system.send(b, 'crash');
    await system.exited(a);
    await system.exited(b);
    expect(seen[0]).toEqual({ shutdown: 'done' });
    expect((seen[1] as Error).message).toBe('crashed');
  });

  it('an async terminate is awaited before the actor exits', async () => {
    const system = testSystem();
    const gate = deferred();
    const ref = system.spawn({
      handle(ctx, message) {
        if (message === 'stop') ctx.stop();
      },
      async terminate() {
        await gate.promise;
      },
    });
    system.send(ref, 'stop');
    await system.settle();
    expect(system.isAlive(ref)).toBe(true);
    expect(system.info(ref)?.status).toBe('exiting');
    gate.resolve();
    expect(await system.exited(ref)).toBe('normal');
  });

  it('does not run when the actor is killed by a signal', async () => {
    const system = testSystem();
    let terminated = false;
    const ref = system.spawn({
      handle() {},
      terminate() {
        terminated = true;
      },
    });
    system.exit(ref, 'kill');
    await system.settle();
    expect(terminated).toBe(false);
  });

  it('OTP gen_server_SUITE: undef_in_terminate — a terminate that throws exits with what it threw', async () => {
    const system = testSystem();
    const failure = new Error('terminate failed');
    const ref = system.spawn({
      handle(ctx) {
        ctx.stop('shutdown');
      },
      terminate() {
        throw failure;
      },
    });
    system.send(ref, 'stop');
    expect(await system.exited(ref)).toBe(failure);
  });

  it('an async terminate that rejects exits with the rejection; one that resolves keeps the reason', async () => {
    const system = testSystem();
    const failure = new Error('async terminate failed');
    const failing = system.spawn({
      handle: (ctx) => ctx.stop('shutdown'),
      terminate: async () => {
        await Promise.resolve();
        throw failure;
      },
    });
    const clean = system.spawn({ handle: (ctx) => ctx.stop('shutdown'), terminate: async () => {} });
    const failed = system.exited(failing);
    const cleaned = system.exited(clean);
    system.send(failing, 'stop');
    system.send(clean, 'stop');
    expect(await failed).toBe(failure);
    expect(await cleaned).toBe('shutdown');
  });
});

describe('exit signals', () => {
  it('normal from another actor is ignored by a non-trapping actor', async () => {
    const system = testSystem();
    const target = system.spawn(() => {});
    system.exit(target, 'normal');
    const other = system.spawn<string>((_m, ctx) => ctx.exit(target, 'normal'));
    system.send(other, 'go');
    await system.settle();
    expect(system.isAlive(target)).toBe(true);
    system.exit(target, 'kill');
    system.exit(other, 'kill');
  });

  it('an actor that sends itself exit normal does exit normal (as OTP exit(self(), normal))', async () => {
    const system = testSystem();
    const ref = system.spawn<string>((_m, ctx) => ctx.exit(ctx.self, 'normal'));
    const exited = system.exited(ref);
    system.send(ref, 'go');
    expect(await exited).toBe('normal');
  });

  it.each<[string, ExitReason]>([
    ['shutdown', 'shutdown'],
    ['{shutdown, _}', { shutdown: 'detail' }],
    ['an error', new Error('remote')],
  ])('%s kills a non-trapping actor and reaches a trapping one as an EXIT message', async (_label, reason) => {
    const system = testSystem();
    const plain = system.spawn(() => {});
    const { ref: trapper, seen } = recorder(system, { trapExit: true });
    const exits = exitLog(system, plain);
    system.exit(plain, reason);
    system.exit(trapper, reason);
    expect(exits.get(plain)).toEqual(reason);
    await system.settle();
    expect(system.isAlive(trapper)).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(ExitMessage);
    expect((seen[0] as ExitMessage).reason).toEqual(reason);
    expect((seen[0] as ExitMessage).from).toBe(system.outside);
    system.exit(trapper, 'kill');
  });

  it('normal reaches a trapping actor as a message', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { trapExit: true });
    system.exit(ref, 'normal');
    await system.settle();
    expect((seen[0] as ExitMessage).reason).toBe('normal');
    system.exit(ref, 'kill');
  });

  it('kill is untrappable and the actor exits killed', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system, { trapExit: true });
    const exited = system.exited(ref);
    system.exit(ref, 'kill');
    expect(await exited).toBe('killed');
    expect(seen).toEqual([]);
  });

  it('kill from inside an actor, the sender identified in EXIT messages', async () => {
    const system = testSystem();
    const { ref: trapper, seen } = recorder(system, { trapExit: true });
    const killer = system.spawn<string>((_m, ctx) => ctx.exit(trapper, 'shutdown'));
    system.send(killer, 'go');
    await system.settle();
    expect((seen[0] as ExitMessage).from).toBe(killer);
    system.exit(trapper, 'kill');
    system.exit(killer, 'kill');
  });

  it('an actor that stops itself with kill is seen as killed by links and monitors', async () => {
    const system = testSystem();
    const ref = system.spawn<string>((_m, ctx) => ctx.stop('kill'));
    const { ref: trapper, seen } = recorder(system, { trapExit: true, link: ref });
    const exits = exitLog(system, ref);
    system.send(ref, 'stop');
    await system.exited(ref);
    await system.settle();
    expect(exits.get(ref)).toBe('killed');
    expect((seen[0] as ExitMessage).reason).toBe('killed');
    system.exit(trapper, 'kill');
  });

  it('an exit signal to a dead actor is silent', () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    system.exit(ref, 'kill');
    expect(() => system.exit(ref, 'kill')).not.toThrow();
  });

  it('an actor killed mid async handler never handles another message', async () => {
    const system = testSystem();
    const gate = deferred();
    const handled: string[] = [];
    const ref = system.spawn<string>(async (message) => {
      handled.push(message as string);
      await gate.promise;
    });
    system.send(ref, 'first');
    system.send(ref, 'second');
    await system.settle();
    system.exit(ref, 'kill');
    gate.resolve();
    await system.settle();
    expect(handled).toEqual(['first']);
  });
});

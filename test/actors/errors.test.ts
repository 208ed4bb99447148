import { describe, expect, it } from 'vitest';
import {
  ActorCrashed,
  ActorErrorCode,
  ActorLimitReached,
  AlreadyNamed,
  CalleeExited,
  CallTimeout,
  InvalidOption,
  MailboxFull,
  MoloError,
  NameTaken,
  NoProc,
  NotInActor,
  ReceivePending,
  Ref,
  SystemStopped,
} from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';

const ref = new Ref('n', 1, 1);

describe('kernel errors', () => {
  const samples: Array<[MoloError, string]> = [
    [new NoProc(ref), 'ACTOR_NOPROC'],
    [new MailboxFull(ref, 10), 'ACTOR_MAILBOX_FULL'],
    [new CallTimeout(ref, 5), 'ACTOR_CALL_TIMEOUT'],
    [new CalleeExited(ref, 'killed'), 'ACTOR_CALLEE_EXITED'],
    [new NameTaken('x', ref), 'ACTOR_NAME_TAKEN'],
    [new AlreadyNamed(ref, 'x'), 'ACTOR_ALREADY_NAMED'],
    [new InvalidOption('opt', 'bad'), 'ACTOR_INVALID_OPTION'],
    [new NotInActor('receive'), 'ACTOR_NOT_IN_ACTOR'],
    [new ReceivePending(ref), 'ACTOR_RECEIVE_PENDING'],
    [new SystemStopped('n'), 'ACTOR_SYSTEM_STOPPED'],
    [new ActorCrashed(1), 'ACTOR_CRASHED'],
    [new ActorLimitReached(1), 'ACTOR_LIMIT_REACHED'],
  ];

  it.each(samples)('%s has a stable code, its class name and is an Error', (error, code) => {
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(MoloError);
    expect(error.code).toBe(code);
    expect(error.name).toBe(error.constructor.name);
  });

  it('codes are unique, and each error above uses its registered code', () => {
    const codes = Object.values(ActorErrorCode) as string[];
    expect(new Set(codes).size).toBe(codes.length);
    for (const [, code] of samples) expect(codes).toContain(code);
  });

  it('spawning after shutdown throws SystemStopped; past maxActors throws ActorLimitReached', () => {
    const stopped = testSystem();
    stopped.shutdown();
    expect(() => stopped.spawn(() => {})).toThrow(SystemStopped);
    const small = testSystem({ maxActors: 2 });
    const a = small.spawn(() => {});
    const b = small.spawn(() => {});
    expect(() => small.spawn(() => {})).toThrow(ActorLimitReached);
    small.exit(a, 'kill');
    const c = small.spawn(() => {});
    small.exit(b, 'kill');
    small.exit(c, 'kill');
  });
});

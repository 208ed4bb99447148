import { describe, expect, it } from 'vitest';
import { shutdownWith, SimulatedClock, type ExitReason, type Ref } from '../../src/actors/index.js';
import {
  ChildAlreadyPresent,
  ChildAlreadyStarted,
  ChildNotFound,
  ChildRestarting,
  ChildRunning,
  DEFAULT_INTENSITY,
  DEFAULT_PERIOD_MS,
  DynamicOnly,
  GenServer,
  InvalidChildSpec,
  InvalidSupervisorSpec,
  StartFailed,
  Supervisor,
  TooManyChildren,
  worker,
  type ChildSpec,
  type RestartType,
  type SupervisorSpec,
} from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';
import { childRef, crash, crashChild, ProbeLog, probe, rejection, type CrashReason } from './helpers.js';

async function refsOf(system: ReturnType<typeof testSystem>, sup: Ref): Promise<Record<string, Ref | 'restarting' | undefined>> {
  const entries = await Supervisor.whichChildren(system, sup);
  return Object.fromEntries(entries.map((entry) => [entry.id ?? '?', entry.ref]));
}

async function restartCounts(system: ReturnType<typeof testSystem>, sup: Ref): Promise<Record<string, number>> {
  const status = await Supervisor.status(system, sup);
  return Object.fromEntries(status.children.map((child) => [child.id ?? '?', child.restartCount]));
}


describe('Supervisor: start and stop', () => {
  it('OTP supervisor_SUITE: sup_start_normal / order_of_shutdown — starts children in order, stops them in reverse', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: ['a', 'b', 'c'].map((id) => probe(id, log)) });
    expect(log.take()).toEqual(['start a', 'start b', 'start c']);
    const entries = await Supervisor.whichChildren(system, sup);
    expect(entries.map((e) => e.id)).toEqual(['a', 'b', 'c']);
    for (const entry of entries) expect(system.isAlive(entry.ref as Ref)).toBe(true);
    expect(await Supervisor.stop(system, sup)).toBe('shutdown');
    expect(log.take()).toEqual(['stop c shutdown', 'stop b shutdown', 'stop a shutdown']);
    expect(system.actorCount).toBe(0);
  });

  it('OTP supervisor_SUITE: sup_start_fail — a child whose init fails makes start reject; earlier children are stopped', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    log.failNext.set('b', 1);
    const error = await rejection(Supervisor.start(system, { children: ['a', 'b', 'c'].map((id) => probe(id, log)) }));
    expect(error).toBeInstanceOf(StartFailed);
    expect(error.code).toBe('BEHAVIOUR_START_FAILED');
    // OTP: {error, {shutdown, {failed_to_start_child, b, Reason}}}
    const reason = (error as StartFailed).reason as { shutdown: { failedToStartChild: string; reason: Error } };
    expect(reason.shutdown.failedToStartChild).toBe('b');
    expect(reason.shutdown.reason.message).toBe('start of b failed');
    expect(log.take()).toEqual(['start a', 'fail b', 'stop a shutdown']);
    expect(log.attempts.get('c')).toBeUndefined();
    expect(system.actorCount).toBe(0);
  });

  it('a failed start leaves nothing behind when it rejects: the name can be taken again at once', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    log.failNext.set('b', 1);
    const spec: SupervisorSpec = { children: [probe('a', log), probe('b', log)] };
    await expect(Supervisor.start(system, spec, { name: 'sup' })).rejects.toBeInstanceOf(StartFailed);
    expect(system.whereis('sup')).toBeUndefined();
    expect(system.actorCount).toBe(0);
    const sup = await Supervisor.start(system, spec, { name: 'sup' });
    expect(system.whereis('sup')).toBe(sup);
    await Supervisor.stop(system, 'sup');
  });

  it('a start function that throws (not a GenServer) also fails the supervisor start', async () => {
    const system = testSystem();
    const boom = new Error('no');
    const error = await rejection(
      Supervisor.start(system, {
        children: [
          {
            id: 'x',
            start: () => {
              throw boom;
            },
          },
        ],
      }),
    );
    expect(((error as StartFailed).reason as { shutdown: { reason: unknown } }).shutdown.reason).toBe(boom);
  });

  it('OTP supervisor_SUITE: sup_start_ignore_child — a child answering ignore is kept, not running', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      children: [{ id: 'ignored', start: () => undefined }, probe('a', log)],
    });
    expect(await refsOf(system, sup)).toEqual({ ignored: undefined, a: expect.anything() });
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 2, active: 1, supervisors: 0, workers: 2 });
    // startChild of an ignoring child answers undefined.
    expect(await Supervisor.startChild(system, sup, { id: 'ignored2', start: () => undefined })).toBeUndefined();
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['ignored', 'a', 'ignored2']);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: sup_start_ignore_temporary_child(_start_child) — a temporary child answering ignore is not kept', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      children: [{ id: 'ignored', restart: 'temporary', start: () => undefined }, probe('a', log)],
    });
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['a']);
    expect(await Supervisor.startChild(system, sup, { id: 'later', restart: 'temporary', start: () => undefined })).toBeUndefined();
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['a']);
    await Supervisor.stop(system, sup);
  });

  it('an empty supervisor starts and stops', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [] });
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    expect(await Supervisor.stop(system, sup, 'normal')).toBe('normal');
  });

  it('a supervisor linked to a parent stops (children first) when the parent exits', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const parent = system.spawn(() => {});
    const sup = await Supervisor.start(system, { children: [probe('a', log), probe('b', log)] }, { link: parent });
    log.take();
    const exited = system.exited(sup);
    system.exit(parent, 'shutdown');
    expect(await exited).toBe('shutdown');
    expect(log.take()).toEqual(['stop b shutdown', 'stop a shutdown']);
  });

  it('validates its spec: strategy, intensity, periodMs, maxChildren, duplicate ids, child fields', () => {
    const system = testSystem();
    const start = () => undefined;
    const invalid = (spec: SupervisorSpec): unknown => {
      try {
        void Supervisor.start(system, spec);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const spec of [
      { strategy: 'one_for_some' as never },
      { intensity: -1 },
      { intensity: 1.5 },
      { periodMs: 0 },
      { maxChildren: 0 },
      { maxChildren: 1, children: [{ id: 'a', start }, { id: 'b', start }] },
      { children: [{ id: 'a', start }, { id: 'a', start }] },
      { strategy: 'simple_one_for_one' as const, children: [] },
      { strategy: 'one_for_one' as const },
    ]) {
      const error = invalid(spec as SupervisorSpec);
      expect(error, JSON.stringify(spec)).toBeInstanceOf(InvalidSupervisorSpec);
      expect((error as InvalidSupervisorSpec).code).toBe('SUP_INVALID_FLAGS');
    }
    for (const child of [
      { id: '', start },
      { id: 'x', start: 'nope' as never },
      { id: 'x', start, restart: 'sometimes' as never },
      { id: 'x', start, type: 'manager' as never },
      { id: 'x', start, shutdown: -5 },
      { id: 'x', start, shutdown: 'later' as never },
      { id: 'x', start, backoff: { initialMs: 10, maxMs: 5 } },
    ]) {
      const error = invalid({ children: [child as ChildSpec] });
      expect(error, JSON.stringify(child)).toBeInstanceOf(InvalidChildSpec);
      expect((error as InvalidChildSpec).code).toBe('SUP_INVALID_SPEC');
    }
  });
});

describe('Supervisor: restart types (OTP supervisor_SUITE: {permanent,transient,temporary}_{normal,shutdown,abnormal})', () => {
  const reasons: [string, CrashReason][] = [
    ['normal', 'normal'],
    ['shutdown', 'shutdown'],
    ['{shutdown, x}', shutdownWith('x')],
    ['an Error', new Error('crash')],
    ['kill', 'kill'],
  ];
  const expected: Record<RestartType, (reason: CrashReason) => 'restarted' | 'kept' | 'removed'> = {
    permanent: () => 'restarted',
    transient: (reason) => (reason instanceof Error || reason === 'kill' ? 'restarted' : 'kept'),
    temporary: () => 'removed',
  };
  for (const restart of ['permanent', 'transient', 'temporary'] as const) {
    for (const [label, reason] of reasons) {
      const outcome = expected[restart](reason);
      it(`${restart} child exiting with ${label} is ${outcome}`, async () => {
        const system = testSystem();
        const log = new ProbeLog();
        const sup = await Supervisor.start(system, { intensity: 5, children: [probe('c', log, { restart }), probe('other', log)] });
        const before = await childRef(system, sup, 'c');
        const other = await childRef(system, sup, 'other');
        await crashChild(system, sup, 'c', reason);
        const entries = await refsOf(system, sup);
        if (outcome === 'removed') expect(Object.keys(entries)).toEqual(['other']);
        else expect(Object.keys(entries)).toEqual(['c', 'other']);
        if (outcome === 'kept') expect(entries.c).toBeUndefined();
        if (outcome === 'restarted') {
          expect(entries.c).not.toBe(before);
          expect(system.isAlive(entries.c as Ref)).toBe(true);
          expect((await restartCounts(system, sup)).c).toBe(1);
          expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(1);
        } else {
          expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(0);
        }
        expect(entries.other).toBe(other);
        await Supervisor.stop(system, sup);
      });
    }
  }

  it('OTP supervisor_SUITE: permanent_normal — a permanent child’s normal exit counts toward intensity', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 1, periodMs: 5_000, children: [probe('p', log), probe('q', log)] });
    const exited = system.exited(sup);
    await crashChild(system, sup, 'p', 'normal');
    expect(system.isAlive(sup)).toBe(true);
    await crashChild(system, sup, 'p', 'normal');
    expect(await exited).toBe('shutdown');
    expect(system.actorCount).toBe(0);
  });
});

describe('Supervisor: intensity', () => {
  it('defaults to OTP’s 1 restart in 5 s', async () => {
    expect(DEFAULT_INTENSITY).toBe(1);
    expect(DEFAULT_PERIOD_MS).toBe(5_000);
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('a', log)] });
    const status = await Supervisor.status(system, sup);
    expect(status).toMatchObject({ strategy: 'one_for_one', intensity: 1, periodMs: 5_000, restartsInWindow: 0, remainingIntensity: 1 });
    await crashChild(system, sup, 'a', new Error('1'));
    expect(await Supervisor.status(system, sup)).toMatchObject({ restartsInWindow: 1, remainingIntensity: 0 });
    const exited = system.exited(sup);
    clock.advance(5_000);
    // Exactly 5 s later the first restart still counts: the second one exceeds.
    await crashChild(system, sup, 'a', new Error('2'));
    expect(await exited).toBe('shutdown');
    expect(system.actorCount).toBe(0);
  });

  it('restarts age out of the period', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 2, periodMs: 1_000, children: [probe('a', log)] });
    for (let i = 0; i < 10; i++) {
      await crashChild(system, sup, 'a', new Error(`crash ${i}`));
      clock.advance(501);
    }
    // Never more than two restarts within any 1 s.
    expect(system.isAlive(sup)).toBe(true);
    expect((await restartCounts(system, sup)).a).toBe(10);
    clock.advance(1_000);
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(0);
    await Supervisor.stop(system, sup);
  });

  it('intensity 0: the first restart shuts the supervisor down (and every child with it)', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 0, children: [probe('a', log), probe('b', log), probe('c', log)] });
    log.take();
    const exited = system.exited(sup);
    await crashChild(system, sup, 'b', new Error('boom'));
    expect(await exited).toBe('shutdown');
    expect(log.take()).toEqual(['stop b error', 'stop c shutdown', 'stop a shutdown']);
    expect(system.actorCount).toBe(0);
  });

  it('exits that need no restart never count (transient normal, temporary anything)', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      intensity: 0,
      children: [probe('t', log, { restart: 'transient' }), probe('tmp', log, { restart: 'temporary' })],
    });
    await crashChild(system, sup, 't', 'normal');
    await crashChild(system, sup, 'tmp', new Error('x'));
    expect(system.isAlive(sup)).toBe(true);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([{ id: 't', ref: undefined, type: 'worker' }]);
    await Supervisor.stop(system, sup);
  });
});

describe('Supervisor: strategies', () => {
  it('OTP supervisor_SUITE: one_for_one — only the failed child is restarted', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { strategy: 'one_for_one', intensity: 5, children: ['a', 'b', 'c'].map((id) => probe(id, log)) });
    const before = await refsOf(system, sup);
    log.take();
    await crashChild(system, sup, 'b', new Error('x'));
    expect(log.take()).toEqual(['stop b error', 'start b']);
    const after = await refsOf(system, sup);
    expect(after.a).toBe(before.a);
    expect(after.b).not.toBe(before.b);
    expect(after.c).toBe(before.c);
    expect(await restartCounts(system, sup)).toEqual({ a: 0, b: 1, c: 0 });
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: one_for_all — all children are stopped in reverse order, then restarted in order', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { strategy: 'one_for_all', intensity: 5, children: ['a', 'b', 'c', 'd'].map((id) => probe(id, log)) });
    log.take();
    await crashChild(system, sup, 'b', new Error('x'));
    expect(log.take()).toEqual(['stop b error', 'stop d shutdown', 'stop c shutdown', 'stop a shutdown', 'start a', 'start b', 'start c', 'start d']);
    expect(await restartCounts(system, sup)).toEqual({ a: 1, b: 1, c: 1, d: 1 });
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(1);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: rest_for_one — only the failed child and later siblings are restarted', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { strategy: 'rest_for_one', intensity: 5, children: ['a', 'b', 'c', 'd'].map((id) => probe(id, log)) });
    const before = await refsOf(system, sup);
    log.take();
    await crashChild(system, sup, 'b', new Error('x'));
    expect(log.take()).toEqual(['stop b error', 'stop d shutdown', 'stop c shutdown', 'start b', 'start c', 'start d']);
    expect((await refsOf(system, sup)).a).toBe(before.a);
    expect(await restartCounts(system, sup)).toEqual({ a: 0, b: 1, c: 1, d: 1 });
    // The last child restarts alone.
    await crashChild(system, sup, 'd', 'kill');
    expect(log.take()).toEqual(['stop d killed', 'start d']);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: temporary_bystander — temporary children are not restarted, not even by one_for_all', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      strategy: 'one_for_all',
      intensity: 5,
      children: [probe('p', log), probe('tmp', log, { restart: 'temporary' }), probe('q', log)],
    });
    log.take();
    await crashChild(system, sup, 'p', new Error('x'));
    expect(log.take()).toEqual(['stop p error', 'stop q shutdown', 'stop tmp shutdown', 'start p', 'start q']);
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['p', 'q']);
    await Supervisor.stop(system, sup);
  });

  it('rest_for_one drops temporary later siblings, keeps temporary earlier ones', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      strategy: 'rest_for_one',
      intensity: 5,
      children: [probe('t1', log, { restart: 'temporary' }), probe('p', log), probe('t2', log, { restart: 'temporary' })],
    });
    await crashChild(system, sup, 'p', new Error('x'));
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['t1', 'p']);
    await Supervisor.stop(system, sup);
  });

  it('one_for_all also restarts a sibling that was stopped (transient, exited normally), as OTP’s start_children does', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      strategy: 'one_for_all',
      intensity: 5,
      children: [probe('t', log, { restart: 'transient' }), probe('p', log)],
    });
    await crashChild(system, sup, 't', 'normal');
    expect((await refsOf(system, sup)).t).toBeUndefined();
    log.take();
    await crashChild(system, sup, 'p', new Error('x'));
    expect(log.take()).toEqual(['stop p error', 'start t', 'start p']);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: one_for_all_other_child_fails_restart — a partial group restart is rolled back before the retry', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { strategy: 'one_for_all', intensity: 5, children: ['a', 'b', 'c'].map((id) => probe(id, log)) });
    log.take();
    log.failNext.set('b', 1);
    await crashChild(system, sup, 'a', new Error('x'));
    expect(log.take()).toEqual([
      'stop a error',
      'stop c shutdown',
      'stop b shutdown',
      'start a',
      'fail b',
      // The retry: a, restarted before the failure, is shut down again; then the whole group starts.
      'stop a shutdown',
      'start a',
      'start b',
      'start c',
    ]);
    expect(await restartCounts(system, sup)).toEqual({ a: 2, b: 1, c: 1 });
    // The crash and the failed attempt both count.
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(2);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: rest_for_one_other_child_fails_restart — the retry starts from the failed child', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { strategy: 'rest_for_one', intensity: 5, children: ['a', 'b', 'c'].map((id) => probe(id, log)) });
    log.take();
    log.failNext.set('b', 2);
    await crashChild(system, sup, 'a', new Error('x'));
    expect(log.take()).toEqual(['stop a error', 'stop c shutdown', 'stop b shutdown', 'start a', 'fail b', 'fail b', 'start b', 'start c']);
    expect(await restartCounts(system, sup)).toEqual({ a: 1, b: 1, c: 1 });
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(3);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: hanging_restart_loop — a failed restart is retried, each attempt counting, until the intensity gives out', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 3, children: [probe('a', log), probe('b', log)] });
    log.take();
    log.failNext.set('a', 100);
    const exited = system.exited(sup);
    await crashChild(system, sup, 'a', new Error('x'));
    expect(await exited).toBe('shutdown');
    // crash (1), fail (2), fail (3), fail (4 > 3): three attempts, then give up.
    expect(log.take()).toEqual(['stop a error', 'fail a', 'fail a', 'fail a', 'stop b shutdown']);
    expect(system.actorCount).toBe(0);
  });

  it('OTP supervisor_SUITE: count_restarting_children — a child between a failed restart and its retry is restarting', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    // The backoff holds the retry, so the test can look at the child in between.
    const sup = await Supervisor.start(system, { intensity: 5, children: [{ ...probe('a', log), backoff: { initialMs: 100, maxMs: 100 } }] });
    await crashChild(system, sup, 'a', new Error('x'));
    clock.advance(100);
    log.failNext.set('a', 1);
    await system.settle();
    expect(log.take()).toEqual(['start a', 'stop a error', 'fail a']);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([{ id: 'a', ref: 'restarting', type: 'worker' }]);
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 1, active: 0, supervisors: 0, workers: 1 });
    for (const error of [await rejection(Supervisor.restartChild(system, sup, 'a')), await rejection(Supervisor.deleteChild(system, sup, 'a'))]) {
      expect(error).toBeInstanceOf(ChildRestarting);
      expect(error.code).toBe('SUP_RESTARTING');
      expect(error.reason).toBe('restarting');
    }
    expect((await Supervisor.status(system, sup)).children[0]!.state).toBe('backoff');
    clock.advance(200);
    await system.settle();
    expect(log.take()).toEqual(['start a']);
    expect(system.isAlive((await childRef(system, sup, 'a'))!)).toBe(true);
    await Supervisor.stop(system, sup);
  });

  it('without backoff the retry goes through the mailbox: a call queued behind the failed attempt sees restarting', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    let hold: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (hold = resolve));
    const spec = probe('a', log);
    let attempts = 0;
    const sup = await Supervisor.start(system, {
      intensity: 5,
      children: [
        {
          ...spec,
          // The first restart attempt waits at the gate, then fails.
          start: async (context) => {
            if (++attempts === 2) {
              await gate;
              throw new Error('restart failed');
            }
            return spec.start(context);
          },
        },
      ],
    });
    await crashChild(system, sup, 'a', new Error('x'));
    const during = Supervisor.whichChildren(system, sup);
    hold!();
    expect(await during).toEqual([{ id: 'a', ref: 'restarting', type: 'worker' }]);
    await system.settle();
    expect(system.isAlive((await childRef(system, sup, 'a'))!)).toBe(true);
    expect(attempts).toBe(3);
    await Supervisor.stop(system, sup);
  });
});

describe('Supervisor: nested supervisors and escalation', () => {
  it('OTP supervisor_SUITE: one_for_one_escalation — a child supervisor giving up is restarted by its parent', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const inner: SupervisorSpec = { intensity: 0, children: [probe('leaf', log), probe('leaf2', log)] };
    const top = await Supervisor.start(system, { intensity: 1, children: [Supervisor.child('inner', inner), probe('sibling', log)] });
    expect(await Supervisor.countChildren(system, top)).toEqual({ specs: 2, active: 2, supervisors: 1, workers: 1 });
    expect((await Supervisor.whichChildren(system, top))[0]).toMatchObject({ id: 'inner', type: 'supervisor' });
    const innerRef = (await childRef(system, top, 'inner'))!;
    const sibling = await childRef(system, top, 'sibling');
    log.take();
    await crashChild(system, innerRef, 'leaf', new Error('x'));
    expect(log.take()).toEqual(['stop leaf error', 'stop leaf2 shutdown', 'start leaf', 'start leaf2']);
    const newInner = (await childRef(system, top, 'inner'))!;
    expect(newInner).not.toBe(innerRef);
    expect(system.isAlive(innerRef)).toBe(false);
    expect(await childRef(system, top, 'sibling')).toBe(sibling);
    expect((await restartCounts(system, top)).inner).toBe(1);
    await Supervisor.stop(system, top);
    expect(system.actorCount).toBe(0);
  });

  it('escalation climbs: when the parent’s intensity is exhausted too, the whole tree goes down', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const inner: SupervisorSpec = { intensity: 0, children: [probe('leaf', log)] };
    const top = await Supervisor.start(system, { intensity: 0, children: [probe('first', log), Supervisor.child('inner', inner), probe('last', log)] });
    const exited = system.exited(top);
    const innerRef = (await childRef(system, top, 'inner'))!;
    log.take();
    await crashChild(system, innerRef, 'leaf', new Error('x'));
    expect(await exited).toBe('shutdown');
    expect(log.take()).toEqual(['stop leaf error', 'stop last shutdown', 'stop first shutdown']);
    expect(system.actorCount).toBe(0);
  });

  it('stopping the top stops nested supervisors depth-first, in reverse order', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const top = await Supervisor.start(system, {
      children: [probe('a', log), Supervisor.child('inner', { children: [probe('x', log), probe('y', log)] }), probe('b', log)],
    });
    log.take();
    await Supervisor.stop(system, top);
    expect(log.take()).toEqual(['stop b shutdown', 'stop y shutdown', 'stop x shutdown', 'stop a shutdown']);
  });

  it('a nested supervisor’s failed start fails its parent’s start', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    log.failNext.set('leaf', 1);
    const error = await rejection(Supervisor.start(system, { children: [probe('a', log), Supervisor.child('inner', { children: [probe('leaf', log)] })] }));
    expect(error).toBeInstanceOf(StartFailed);
    expect(log.take()).toEqual(['start a', 'fail leaf', 'stop a shutdown']);
    expect(system.actorCount).toBe(0);
  });
});

describe('Supervisor: shutdown policies', () => {
  it('OTP supervisor_SUITE: sup_stop_timeout — a child that traps exits and ignores shutdown is killed at its timeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('stubborn', log, { stubborn: true, shutdown: 1_000 })] });
    log.take();
    const stopped = Supervisor.stop(system, sup);
    await system.settle();
    clock.advance(999);
    await system.settle();
    expect(system.isAlive(sup)).toBe(true);
    expect(log.take()).toEqual([]);
    clock.advance(1);
    expect(await stopped).toBe('shutdown');
    expect(log.take()).toEqual(['stop stubborn killed']);
  });

  it('the default worker shutdown is 5,000 ms', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('stubborn', log, { stubborn: true })] });
    const stopped = Supervisor.stop(system, sup);
    await system.settle();
    clock.advance(4_999);
    await system.settle();
    expect(system.isAlive(sup)).toBe(true);
    clock.advance(1);
    expect(await stopped).toBe('shutdown');
  });

  it('OTP supervisor_SUITE: sup_stop_brutal_kill — brutal_kill kills a trapping child at once, without terminate', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('stubborn', log, { stubborn: true, shutdown: 'brutal_kill' })] });
    log.take();
    expect(await Supervisor.stop(system, sup)).toBe('shutdown');
    expect(log.take()).toEqual(['stop stubborn killed']);
  });

  it('OTP supervisor_SUITE: sup_stop_infinity — infinity waits for the child however long it takes', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const terminated: ExitReason[] = [];
    class Slow extends GenServer {
      override async terminate(reason: ExitReason) {
        await gate;
        terminated.push(reason);
      }
    }
    const sup = await Supervisor.start(system, {
      children: [worker('slow', () => new Slow(), { shutdown: 'infinity', server: { trapExit: true } })],
    });
    const stopped = Supervisor.stop(system, sup);
    await system.settle();
    clock.advance(3_600_000);
    await system.settle();
    expect(system.isAlive(sup)).toBe(true);
    release();
    expect(await stopped).toBe('shutdown');
    expect(terminated).toEqual(['shutdown']);
  });

  it('a trapping GenServer child runs terminate(shutdown) when the supervisor stops it within its timeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const terminated: ExitReason[] = [];
    class Tidy extends GenServer {
      override terminate(reason: ExitReason) {
        terminated.push(reason);
      }
    }
    const sup = await Supervisor.start(system, { children: [worker('tidy', () => new Tidy(), { shutdown: 100, server: { trapExit: true } })] });
    await Supervisor.terminateChild(system, sup, 'tidy');
    expect(terminated).toEqual(['shutdown']);
    await Supervisor.stop(system, sup);
  });

  it('a stubborn child is killed at its timeout during a one_for_all restart too', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      strategy: 'one_for_all',
      intensity: 5,
      children: [probe('a', log), probe('stubborn', log, { stubborn: true, shutdown: 200 })],
    });
    log.take();
    const ref = (await childRef(system, sup, 'a'))!;
    crash(system, ref, new Error('x'));
    await system.settle();
    expect(log.take()).toEqual(['stop a error']);
    clock.advance(200);
    await system.settle();
    expect(log.take()).toEqual(['stop stubborn killed', 'start a', 'start stubborn']);
    const stopped = Supervisor.stop(system, sup, 'normal');
    await system.settle();
    clock.advance(200);
    expect(await stopped).toBe('normal');
  });

  it('supervisor children default to shutdown infinity (a nested supervisor is never cut short)', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const top = await Supervisor.start(system, {
      children: [Supervisor.child('inner', { children: [probe('stubborn', log, { stubborn: true, shutdown: 60_000 })] })],
    });
    log.take();
    const stopped = Supervisor.stop(system, top);
    await system.settle();
    clock.advance(59_999);
    await system.settle();
    expect(log.take()).toEqual([]);
    clock.advance(1);
    expect(await stopped).toBe('shutdown');
    expect(log.take()).toEqual(['stop stubborn killed']);
  });
});

describe('Supervisor: child administration (OTP supervisor_SUITE: child_adm)', () => {
  it('startChild adds at the end and starts; errors are already_started / already_present', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('a', log)] });
    const b = await Supervisor.startChild(system, sup, probe('b', log));
    expect(system.isAlive(b!)).toBe(true);
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['a', 'b']);

    const started = await rejection(Supervisor.startChild(system, sup, probe('b', log)));
    expect(started).toBeInstanceOf(ChildAlreadyStarted);
    expect(started.code).toBe('SUP_ALREADY_STARTED');
    expect(started.reason).toBe('already_started');
    expect((started as ChildAlreadyStarted).ref).toBe(b);

    await Supervisor.terminateChild(system, sup, 'b');
    const present = await rejection(Supervisor.startChild(system, sup, probe('b', log)));
    expect(present).toBeInstanceOf(ChildAlreadyPresent);
    expect(present.code).toBe('SUP_ALREADY_PRESENT');
    expect(present.reason).toBe('already_present');
    await Supervisor.stop(system, sup);
  });

  it('startChild of a child whose start fails rejects with StartFailed and keeps no spec', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 0, children: [] });
    log.failNext.set('x', 1);
    const error = await rejection(Supervisor.startChild(system, sup, probe('x', log)));
    expect(error).toBeInstanceOf(StartFailed);
    expect(((error as StartFailed).reason as Error).message).toBe('start of x failed');
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    // A failed manual start does not count against the intensity.
    expect(system.isAlive(sup)).toBe(true);
    expect(await Supervisor.startChild(system, sup, probe('x', log))).toBeDefined();
    await Supervisor.stop(system, sup);
  });

  it('startChild rejects an invalid spec with InvalidChildSpec, and arguments with DynamicOnly', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [] });
    expect((await rejection(Supervisor.startChild(system, sup, { id: '', start: () => undefined }))).code).toBe('SUP_INVALID_SPEC');
    const dynamic = await rejection(Supervisor.startChild(system, sup, [1, 2]));
    expect(dynamic).toBeInstanceOf(DynamicOnly);
    expect(dynamic.reason).toBe('simple_one_for_one');
    await Supervisor.stop(system, sup);
  });

  it('terminateChild stops a child and keeps its spec; again is fine; unknown id is not_found', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 0, children: [probe('a', log), probe('b', log)] });
    log.take();
    await Supervisor.terminateChild(system, sup, 'a');
    expect(log.take()).toEqual(['stop a shutdown']);
    expect(await refsOf(system, sup)).toEqual({ a: undefined, b: expect.anything() });
    await Supervisor.terminateChild(system, sup, 'a');
    const missing = await rejection(Supervisor.terminateChild(system, sup, 'zzz'));
    expect(missing).toBeInstanceOf(ChildNotFound);
    expect(missing.code).toBe('SUP_NOT_FOUND');
    expect(missing.reason).toBe('not_found');
    // Terminating is not a restart: the intensity-0 supervisor lives on.
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(0);
    expect(system.isAlive(sup)).toBe(true);
    await Supervisor.stop(system, sup);
  });

  it('terminateChild of a temporary child removes its spec (OTP do_not_save_child_specs_for_temporary_children)', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('tmp', log, { restart: 'temporary' })] });
    await Supervisor.terminateChild(system, sup, 'tmp');
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    await Supervisor.stop(system, sup);
  });

  it('restartChild starts a stopped child (counted as a restart of it, not against intensity); running / not_found errors', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 0, children: [probe('a', log)] });
    const first = await childRef(system, sup, 'a');
    const running = await rejection(Supervisor.restartChild(system, sup, 'a'));
    expect(running).toBeInstanceOf(ChildRunning);
    expect(running.code).toBe('SUP_RUNNING');
    expect(running.reason).toBe('running');
    await Supervisor.terminateChild(system, sup, 'a');
    const again = await Supervisor.restartChild(system, sup, 'a');
    expect(again).not.toBe(first);
    expect(system.isAlive(again!)).toBe(true);
    expect(await restartCounts(system, sup)).toEqual({ a: 1 });
    expect((await Supervisor.status(system, sup)).restartsInWindow).toBe(0);
    expect(await rejection(Supervisor.restartChild(system, sup, 'nope'))).toBeInstanceOf(ChildNotFound);
    await Supervisor.stop(system, sup);
  });

  it('a restartChild whose start fails rejects and leaves the child stopped, uncounted', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { intensity: 0, children: [probe('a', log)] });
    await Supervisor.terminateChild(system, sup, 'a');
    log.failNext.set('a', 1);
    expect(await rejection(Supervisor.restartChild(system, sup, 'a'))).toBeInstanceOf(StartFailed);
    const status = await Supervisor.status(system, sup);
    expect(status.children).toMatchObject([{ id: 'a', ref: undefined, state: 'stopped' }]);
    expect(status.restartsInWindow).toBe(0);
    expect(await Supervisor.restartChild(system, sup, 'a')).toBeDefined();
    await Supervisor.stop(system, sup);
  });

  it('deleteChild removes a stopped child; running / not_found errors', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('a', log), probe('b', log)] });
    const running = await rejection(Supervisor.deleteChild(system, sup, 'a'));
    expect(running).toBeInstanceOf(ChildRunning);
    expect(running.reason).toBe('running');
    await Supervisor.terminateChild(system, sup, 'a');
    await Supervisor.deleteChild(system, sup, 'a');
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['b']);
    const missing = await rejection(Supervisor.deleteChild(system, sup, 'a'));
    expect(missing).toBeInstanceOf(ChildNotFound);
    expect(missing.reason).toBe('not_found');
    // The id is free again: a new child goes to the end.
    await Supervisor.startChild(system, sup, probe('a', log));
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.id)).toEqual(['b', 'a']);
    await Supervisor.stop(system, sup);
  });

  it('OTP supervisor_SUITE: count_children — specs, active, supervisors and workers', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      children: [probe('a', log), probe('b', log), Supervisor.child('s', { children: [probe('x', log)] })],
    });
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 3, active: 3, supervisors: 1, workers: 2 });
    await Supervisor.terminateChild(system, sup, 'b');
    await Supervisor.terminateChild(system, sup, 's');
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 3, active: 1, supervisors: 1, workers: 2 });
    await Supervisor.stop(system, sup);
  });

  it('maxChildren caps the children: startChild beyond it rejects with TooManyChildren', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { maxChildren: 2, children: [probe('a', log)] });
    await Supervisor.startChild(system, sup, probe('b', log));
    const error = await rejection(Supervisor.startChild(system, sup, probe('c', log)));
    expect(error).toBeInstanceOf(TooManyChildren);
    expect(error.code).toBe('SUP_MAX_CHILDREN');
    expect((error as TooManyChildren).maxChildren).toBe(2);
    // At the cap, an existing id is still reported as what it is.
    expect(await rejection(Supervisor.startChild(system, sup, probe('a', log)))).toBeInstanceOf(ChildAlreadyStarted);
    await Supervisor.deleteChild(system, sup, 'b').catch(() => undefined);
    await Supervisor.terminateChild(system, sup, 'b');
    await Supervisor.deleteChild(system, sup, 'b');
    expect(await Supervisor.startChild(system, sup, probe('c', log))).toBeDefined();
    await Supervisor.stop(system, sup);
  });

  it('status reports lifecycle states, restart types and remaining intensity', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      intensity: 3,
      children: [probe('a', log), probe('t', log, { restart: 'transient' })],
    });
    await crashChild(system, sup, 'a', new Error('x'));
    await crashChild(system, sup, 't', 'normal');
    const status = await Supervisor.status(system, sup);
    expect(status).toMatchObject({ intensity: 3, restartsInWindow: 1, remainingIntensity: 2 });
    expect(status.children).toMatchObject([
      { id: 'a', state: 'running', restart: 'permanent', type: 'worker', restartCount: 1 },
      { id: 't', state: 'stopped', restart: 'transient', type: 'worker', restartCount: 0, ref: undefined },
    ]);
    await Supervisor.stop(system, sup);
  });
});

describe('Supervisor: restart backoff', () => {
  it('a child with backoff waits before each restart, doubling up to the cap; it shows as restarting meanwhile', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, {
      intensity: 10,
      periodMs: 1_000_000,
      children: [{ ...probe('a', log), backoff: { initialMs: 100, maxMs: 300 } }],
    });
    log.take();
    for (const delay of [100, 200, 300, 300]) {
      await crashChild(system, sup, 'a', new Error('x'));
      expect(await refsOf(system, sup)).toEqual({ a: 'restarting' });
      clock.advance(delay - 1);
      await system.settle();
      expect(log.take()).toEqual(['stop a error']);
      clock.advance(1);
      await system.settle();
      expect(log.take()).toEqual(['start a']);
    }
    await Supervisor.stop(system, sup);
  });

  it('terminateChild cancels a pending backoff restart', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [{ ...probe('a', log), backoff: { initialMs: 100, maxMs: 100 } }] });
    await crashChild(system, sup, 'a', new Error('x'));
    await Supervisor.terminateChild(system, sup, 'a');
    expect(await refsOf(system, sup)).toEqual({ a: undefined });
    clock.advance(100);
    await system.settle();
    expect(await refsOf(system, sup)).toEqual({ a: undefined });
    await Supervisor.stop(system, sup);
  });
});

describe('Supervisor: dynamic children (simple_one_for_one)', () => {
  class Echo extends GenServer<'args', unknown[], { crash: ExitReason }> {
    constructor(readonly args: unknown[]) {
      super();
    }
    override handleCall(): unknown[] {
      return this.args;
    }
    override handleCast(message: { crash: ExitReason }): void {
      if (message.crash instanceof Error) throw message.crash;
      this.stop(message.crash);
    }
  }
  const template = (restart: RestartType = 'permanent'): ChildSpec =>
    worker('echo', (...args: unknown[]) => new Echo(args), { restart, shutdown: 1_000 });

  it('OTP supervisor_SUITE: simple_one_for_one — children start from the template with extra arguments', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [template()] });
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    const one = (await Supervisor.startChild(system, sup, [1]))!;
    const two = (await Supervisor.startChild(system, sup, ['two', 2]))!;
    expect(await GenServer.call<Echo>(system, one, 'args')).toEqual([1]);
    expect(await GenServer.call<Echo>(system, two, 'args')).toEqual(['two', 2]);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([
      { id: undefined, ref: one, type: 'worker' },
      { id: undefined, ref: two, type: 'worker' },
    ]);
    // OTP's count_children: one spec (the template), however many children.
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 1, active: 2, supervisors: 0, workers: 2 });
    await Supervisor.stop(system, sup);
    expect(system.actorCount).toBe(0);
  });

  it('a restarted dynamic child keeps its arguments; terminateChild by ref removes it; ids are not accepted', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', intensity: 5, children: [template()] });
    const one = (await Supervisor.startChild(system, sup, ['x']))!;
    GenServer.cast<Echo>(system, one, { crash: new Error('boom') });
    await system.settle();
    const [entry] = await Supervisor.whichChildren(system, sup);
    expect(entry!.ref).not.toBe(one);
    expect(await GenServer.call<Echo>(system, entry!.ref as Ref, 'args')).toEqual(['x']);
    expect((await Supervisor.status(system, sup)).children[0]!.restartCount).toBe(1);
    // OTP: the old ref has exited, so terminating it is ok and changes nothing; an id is simple_one_for_one.
    await Supervisor.terminateChild(system, sup, one);
    expect(await Supervisor.whichChildren(system, sup)).toHaveLength(1);
    await Supervisor.terminateChild(system, sup, entry!.ref as Ref);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    const ops = [
      Supervisor.terminateChild(system, sup, 'echo'),
      Supervisor.restartChild(system, sup, 'echo'),
      Supervisor.deleteChild(system, sup, 'echo'),
    ];
    for (const op of ops) {
      const error = await rejection(op);
      expect(error).toBeInstanceOf(DynamicOnly);
      expect(error.code).toBe('SUP_SIMPLE_ONE_FOR_ONE');
      expect(error.reason).toBe('simple_one_for_one');
    }
    await Supervisor.stop(system, sup);
  });

  it('a transient dynamic child exiting normally is removed; temporary ones are never restarted', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [template('transient')] });
    const one = (await Supervisor.startChild(system, sup, []))!;
    const two = (await Supervisor.startChild(system, sup, []))!;
    GenServer.cast<Echo>(system, one, { crash: 'normal' });
    await system.settle();
    expect((await Supervisor.whichChildren(system, sup)).map((e) => e.ref)).toEqual([two]);
    await Supervisor.stop(system, sup);

    const tsup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [template('temporary')] });
    const t = (await Supervisor.startChild(system, tsup, []))!;
    GenServer.cast<Echo>(system, t, { crash: new Error('x') });
    await system.settle();
    expect(await Supervisor.whichChildren(system, tsup)).toEqual([]);
    await Supervisor.stop(system, tsup);
  });

  it('OTP supervisor_SUITE: simple_one_for_one_escalation — too many restarts shut the dynamic supervisor down', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', intensity: 1, children: [template()] });
    const exited = system.exited(sup);
    const refs = [(await Supervisor.startChild(system, sup, [1]))!, (await Supervisor.startChild(system, sup, [2]))!];
    GenServer.cast<Echo>(system, refs[0]!, { crash: new Error('1') });
    await system.settle();
    GenServer.cast<Echo>(system, refs[1]!, { crash: new Error('2') });
    expect(await exited).toBe('shutdown');
    expect(system.actorCount).toBe(0);
  });

  it('OTP supervisor_SUITE: simple_one_for_one_shutdown — all children get shutdown at once; stragglers are killed at the timeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const spec = probe('dyn', log, { stubborn: true, shutdown: 500 });
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [spec] });
    for (let i = 0; i < 3; i++) await Supervisor.startChild(system, sup, []);
    log.take();
    const stopped = Supervisor.stop(system, sup);
    await system.settle();
    clock.advance(499);
    await system.settle();
    expect(log.take()).toEqual([]);
    // One shared deadline, not 3 × 500 ms.
    clock.advance(1);
    expect(await stopped).toBe('shutdown');
    expect(log.take()).toEqual(['stop dyn killed', 'stop dyn killed', 'stop dyn killed']);
  });

  it('maxChildren caps dynamic children too', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', maxChildren: 1, children: [template()] });
    await Supervisor.startChild(system, sup, []);
    expect(await rejection(Supervisor.startChild(system, sup, []))).toBeInstanceOf(TooManyChildren);
    await Supervisor.stop(system, sup);
  });

  it('a dynamic child whose start fails rejects startChild and is not kept', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    log.failNext.set('dyn', 1);
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', intensity: 0, children: [probe('dyn', log)] });
    expect(await rejection(Supervisor.startChild(system, sup, []))).toBeInstanceOf(StartFailed);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    expect(system.isAlive(sup)).toBe(true);
    await Supervisor.stop(system, sup);
  });
});

describe('a start failure says why', () => {
  it("a child whose init throws surfaces the error's name, code and message in the supervisor's StartFailed", async () => {
    const system = testSystem();
    class Db extends GenServer {
      override init(): void {
        throw Object.assign(new Error('DATABASE_URL is not set'), { code: 'CONFIG_MISSING' });
      }
    }
    const error = await rejection(Supervisor.start(system, { strategy: 'one_for_one', children: [worker('db', () => new Db())] }));
    expect(error).toBeInstanceOf(StartFailed);
    expect(error.message).toContain('"failedToStartChild":"db"');
    expect(error.message).toContain('"reason":{"name":"Error","code":"CONFIG_MISSING","message":"DATABASE_URL is not set"}');
  });
});

/**
 * Supervisor held to OTP's supervisor_SUITE (and supervisor.erl where the suite has no case of its
 * own): each test names the case whose outcome it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { CallTimeout, SimulatedClock, type ExitReason, type KernelObserver, type Ref } from '../../src/actors/index.js';
import {
  BehaviourErrorCode,
  ChildNotFound,
  DynamicOnly,
  GenServer,
  IGNORE,
  InvalidChildSpec,
  InvalidSupervisorSpec,
  StartFailed,
  Supervisor,
  worker,
  type ChildSpec,
  type SupervisorSpec,
} from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';
import { crash, ProbeLog, probe, rejection } from './helpers.js';


class Stopper extends GenServer<'ping', string, { stop: ExitReason }> {
  override handleCall(): string {
    return 'pong';
  }
  override handleCast(message: { stop: ExitReason }): void {
    this.stop(message.stop);
  }
}
const stopper = (id: string, options: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec => worker(id, () => new Stopper(), options);
const stopChild = (system: ReturnType<typeof testSystem>, ref: Ref, reason: ExitReason): void =>
  GenServer.cast<Stopper>(system, ref, { stop: reason });

describe('OTP supervisor_SUITE parity: child administration', () => {
  it('supervisor_SUITE: child_adm — terminateChild with a ref on a static supervisor is not_found and stops nothing', async () => {
    const system = testSystem();
    const log = new ProbeLog();
    const sup = await Supervisor.start(system, { children: [probe('a', log)] });
    const [entry] = await Supervisor.whichChildren(system, sup);
    const ref = entry!.ref as Ref;
    const error = await rejection(Supervisor.terminateChild(system, sup, ref));
    expect(error).toBeInstanceOf(ChildNotFound);
    expect(error.reason).toBe('not_found');
    expect(system.isAlive(ref)).toBe(true);
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: child_adm_simple — by id is simple_one_for_one; a ref that already exited is ok', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [stopper('s', { restart: 'temporary' })] });
    const child = (await Supervisor.startChild(system, sup, []))!;
    const byId = await rejection(Supervisor.terminateChild(system, sup, 's'));
    expect(byId).toBeInstanceOf(DynamicOnly);
    expect(byId.reason).toBe('simple_one_for_one');
    stopChild(system, child, 'normal');
    await system.settle();
    await expect(Supervisor.terminateChild(system, sup, child)).resolves.toBeUndefined();
    // A live actor that is not its child stays not_found.
    const stranger = system.spawn(() => {});
    expect(await rejection(Supervisor.terminateChild(system, sup, stranger))).toBeInstanceOf(ChildNotFound);
    system.exit(stranger, 'kill');
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: hanging_restart_loop_simple — terminating the old ref of a restarting child ends the restart loop', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const log = new ProbeLog();
    const template = { ...probe('p', log), backoff: { initialMs: 1_000, maxMs: 1_000 } };
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', intensity: 100, children: [template] });
    const child = (await Supervisor.startChild(system, sup, []))!;
    log.failNext.set('p', 1_000);
    crash(system, child, new Error('boom'));
    await system.settle();
    clock.advance(1_000);
    await system.settle();
    expect(await Supervisor.whichChildren(system, sup)).toEqual([{ id: undefined, ref: 'restarting', type: 'worker' }]);
    await Supervisor.terminateChild(system, sup, child);
    const attempts = log.attempts.get('p');
    clock.advance(10_000);
    await system.settle();
    expect(log.attempts.get('p')).toBe(attempts);
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: count_children — a simple_one_for_one supervisor has one spec', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [stopper('s')] });
    for (let i = 0; i < 3; i++) await Supervisor.startChild(system, sup, []);
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 1, active: 3, supervisors: 0, workers: 3 });
    await Supervisor.stop(system, sup);
  });

  it('supervisor.erl restart/2 (simple_one_for_one) — a dynamic child whose restart answers ignore is dropped', async () => {
    const system = testSystem();
    let ignoreNext = false;
    const template: ChildSpec = {
      id: 'i',
      start: ({ system: sys, parent }) => (ignoreNext ? undefined : GenServer.start(sys, () => new Stopper(), { link: parent })),
    };
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', intensity: 5, children: [template] });
    const child = (await Supervisor.startChild(system, sup, []))!;
    ignoreNext = true;
    stopChild(system, child, { crashed: true });
    await system.settle();
    expect(await Supervisor.whichChildren(system, sup)).toEqual([]);
    expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: 1, active: 0, supervisors: 0, workers: 0 });
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: sup_start_fail — a child start rejecting with any value keeps that value as the reason', async () => {
    const system = testSystem();
    const term = { badmatch: 2 };
    const error = await rejection(Supervisor.start(system, { children: [{ id: 'x', start: () => Promise.reject(term) }] }));
    expect(error).toBeInstanceOf(StartFailed);
    const reason = error.reason as { shutdown: { failedToStartChild: string; reason: unknown } };
    expect(reason.shutdown.failedToStartChild).toBe('x');
    expect(reason.shutdown.reason).toBe(term);
    const sup = await Supervisor.start(system, { children: [] });
    const direct = await rejection(Supervisor.startChild(system, sup, { id: 'y', start: () => Promise.reject('nope') }));
    expect(direct).toBeInstanceOf(StartFailed);
    expect(direct.reason).toBe('nope');
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: extra_return — {ok, Pid, Extra} from a start comes back from start_child and restart_child', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [] });
    const spec: ChildSpec = {
      id: 'e',
      restart: 'transient',
      start: async ({ system: sys, parent }) => ({ ref: await GenServer.start(sys, () => new Stopper(), { link: parent }), extra: 'extra_return' }),
    };
    const started = await Supervisor.startChildWithExtra(system, sup, spec);
    expect(started.extra).toBe('extra_return');
    expect(system.isAlive(started.ref!)).toBe(true);
    await Supervisor.terminateChild(system, sup, 'e');
    const restarted = await Supervisor.restartChildWithExtra(system, sup, 'e');
    expect(restarted.extra).toBe('extra_return');
    expect(await Supervisor.restartChild(system, sup, 'e').catch((e: { reason?: unknown }) => e.reason)).toBe('running');
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: sup_start_map — getChildSpec answers the spec with every default; not_found otherwise', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [stopper('c1'), stopper('c2', { shutdown: 'brutal_kill' })] });
    expect(await Supervisor.getChildSpec(system, sup, 'c1')).toMatchObject({
      id: 'c1',
      restart: 'permanent',
      shutdown: 5_000,
      type: 'worker',
      significant: false,
    });
    expect((await Supervisor.getChildSpec(system, sup, 'c2')).shutdown).toBe('brutal_kill');
    expect(await rejection(Supervisor.getChildSpec(system, sup, 'c4'))).toBeInstanceOf(ChildNotFound);
    await Supervisor.stop(system, sup);
  });

  it('supervisor_SUITE: which_child — one child by id (static) or ref (simple_one_for_one)', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [stopper('w')] });
    const entry = await Supervisor.whichChild(system, sup, 'w');
    expect(entry).toMatchObject({ id: 'w', type: 'worker' });
    expect(system.isAlive(entry.ref as Ref)).toBe(true);
    expect(await rejection(Supervisor.whichChild(system, sup, 'nope'))).toBeInstanceOf(ChildNotFound);
    const dyn = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [stopper('t')] });
    const child = (await Supervisor.startChild(system, dyn, []))!;
    expect(await Supervisor.whichChild(system, dyn, child)).toEqual({ id: undefined, ref: child, type: 'worker' });
    expect(await rejection(Supervisor.whichChild(system, dyn, 't'))).toBeInstanceOf(DynamicOnly);
    await Supervisor.stop(system, dyn);
    await Supervisor.stop(system, sup);
  });

  it('supervisor.erl call/2 — supervisor calls take the caller\'s timeout, Infinity included', async () => {
    const system = testSystem();
    let release!: () => void;
    const slow: ChildSpec = {
      id: 'slow',
      start: async ({ system: sys, parent }) => {
        await new Promise<void>((resolve) => (release = resolve));
        return GenServer.start(sys, () => new Stopper(), { link: parent });
      },
    };
    const sup = await Supervisor.start(system, { children: [] });
    const starting = Supervisor.startChild(system, sup, slow, Infinity);
    const impatient = await rejection(Supervisor.whichChildren(system, sup, 20));
    expect(impatient).toBeInstanceOf(CallTimeout);
    release();
    expect(system.isAlive((await starting)!)).toBe(true);
    expect(await Supervisor.countChildren(system, sup, Infinity)).toMatchObject({ specs: 1, active: 1 });
    await Supervisor.stop(system, sup);
  });

  it('supervisor.erl shutdown/1 — a child whose terminate fails is reported as a shutdown_error with its new reason', async () => {
    const reports: { event: string; fields: Readonly<Record<string, unknown>> }[] = [];
    const observer: KernelObserver = { spawned() {}, exited() {}, report: (event, fields) => void reports.push({ event, fields }) };
    const system = testSystem({ observer });
    class Failing extends GenServer {
      override terminate(): void {
        throw new Error('terminate failed');
      }
    }
    const sup = await Supervisor.start(system, { children: [worker('f', () => new Failing(), { server: { trapExit: true } })] });
    await Supervisor.terminateChild(system, sup, 'f');
    const shutdownError = reports.find((r) => r.event === 'supervisor.shutdown_error');
    expect(shutdownError?.fields.reason).toBe('Error: terminate failed');
    await Supervisor.stop(system, sup);
  });
});

describe('OTP supervisor_SUITE parity: the init callback form', () => {
  it('supervisor_SUITE: sup_start_normal — init returns flags and children', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { init: (n: number) => ({ intensity: n, children: [stopper('a')] }) }, { args: 2 });
    expect((await Supervisor.status(system, sup!)).intensity).toBe(2);
    await Supervisor.stop(system, sup!);
  });

  it('supervisor_SUITE: sup_start_ignore_init — init answering ignore: start gives undefined, the supervisor exited normal', async () => {
    const system = testSystem();
    const result = await Supervisor.start(system, { init: () => IGNORE }, { name: 'ignored' });
    expect(result).toBeUndefined();
    expect(system.whereis('ignored')).toBeUndefined();
    expect(system.actorCount).toBe(0);
  });

  it('supervisor_SUITE: sup_start_error_return — bad flags from init fail the start with a structured spec error', async () => {
    const system = testSystem();
    const error = await rejection(Supervisor.start(system, { init: () => ({ intensity: -1 }) as SupervisorSpec }));
    expect(error).toBeInstanceOf(StartFailed);
    const reason = error.reason as InvalidSupervisorSpec;
    expect(reason).toBeInstanceOf(InvalidSupervisorSpec);
    expect(reason.option).toBe('intensity');
    expect(reason.value).toBe(-1);
    const badChild = await rejection(Supervisor.start(system, { init: () => ({ children: [{ id: 'c', start: () => undefined, restart: 'sometimes' } as unknown as ChildSpec] }) }));
    const childError = badChild.reason as InvalidChildSpec;
    expect(childError).toBeInstanceOf(InvalidChildSpec);
    expect([childError.childId, childError.field, childError.value]).toEqual(['c', 'restart', 'sometimes']);
  });

  it('supervisor_SUITE: sup_start_fail — an init that throws fails the start with that reason', async () => {
    const system = testSystem();
    const failure = new Error('badmatch');
    const error = await rejection(
      Supervisor.start(system, {
        init: async () => {
          await Promise.resolve();
          throw failure;
        },
      }),
    );
    expect(error).toBeInstanceOf(StartFailed);
    expect(error.reason).toBe(failure);
    expect(system.actorCount).toBe(0);
  });

  it('a nested supervisor module answering ignore is an ignored child', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { children: [Supervisor.child('inner', { init: () => IGNORE })] });
    expect(await Supervisor.whichChildren(system, sup)).toEqual([{ id: 'inner', ref: undefined, type: 'supervisor' }]);
    await Supervisor.stop(system, sup);
  });
});

describe('OTP supervisor_SUITE parity: auto_shutdown and significant children (OTP 24)', () => {
  it('supervisor_SUITE: sup_flags — bad combinations are refused with the field and value', async () => {
    const system = testSystem();
    const never = await rejection(
      Promise.resolve().then(() => Supervisor.start(system, { children: [stopper('s', { restart: 'transient', significant: true })] })),
    );
    expect(never).toBeInstanceOf(InvalidChildSpec);
    expect((never as unknown as InvalidChildSpec).field).toBe('significant');
    const permanent = await rejection(
      Promise.resolve().then(() => Supervisor.start(system, { autoShutdown: 'any_significant', children: [stopper('p', { significant: true })] })),
    );
    expect((permanent as unknown as InvalidChildSpec).field).toBe('significant');
    const simple = await rejection(
      Promise.resolve().then(() =>
        Supervisor.start(system, { strategy: 'simple_one_for_one', autoShutdown: 'all_significant', children: [stopper('t', { restart: 'temporary' })] }),
      ),
    );
    expect(simple).toBeInstanceOf(InvalidSupervisorSpec);
    expect((simple as unknown as InvalidSupervisorSpec).option).toBe('autoShutdown');
    expect(simple.code).toBe(BehaviourErrorCode.InvalidSupervisorSpec);
  });

  it('supervisor_SUITE: significant_temporary — any_significant: a significant temporary child exiting stops the supervisor', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, {
      autoShutdown: 'any_significant',
      children: [stopper('bystander'), stopper('sig', { restart: 'temporary', significant: true })],
    });
    const exited = system.exited(sup);
    const sig = (await Supervisor.whichChild(system, sup, 'sig')).ref as Ref;
    stopChild(system, sig, 'normal');
    expect(await exited).toBe('shutdown');
    expect(system.actorCount).toBe(0);
  });

  it('supervisor_SUITE: significant_transient — a significant transient child is restarted on a crash, stops the supervisor on a clean exit', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, {
      autoShutdown: 'any_significant',
      intensity: 5,
      children: [stopper('sig', { restart: 'transient', significant: true })],
    });
    const first = (await Supervisor.whichChild(system, sup, 'sig')).ref as Ref;
    stopChild(system, first, { crashed: 1 });
    await system.settle();
    const second = (await Supervisor.whichChild(system, sup, 'sig')).ref as Ref;
    expect(second).not.toBe(first);
    expect(system.isAlive(sup)).toBe(true);
    const exited = system.exited(sup);
    stopChild(system, second, 'shutdown');
    expect(await exited).toBe('shutdown');
  });

  it('supervisor_SUITE: significant_all — all_significant waits for the last significant child; terminateChild never counts', async () => {
    const system = testSystem();
    const sup = await Supervisor.start(system, {
      autoShutdown: 'all_significant',
      children: [
        stopper('s1', { restart: 'temporary', significant: true }),
        stopper('s2', { restart: 'transient', significant: true }),
        stopper('s3', { restart: 'transient', significant: true }),
      ],
    });
    // Stopped by the supervisor itself: not an exit of its own, so no auto shutdown.
    await Supervisor.terminateChild(system, sup, 's3');
    stopChild(system, (await Supervisor.whichChild(system, sup, 's1')).ref as Ref, 'normal');
    await system.settle();
    expect(system.isAlive(sup)).toBe(true);
    const exited = system.exited(sup);
    stopChild(system, (await Supervisor.whichChild(system, sup, 's2')).ref as Ref, 'normal');
    expect(await exited).toBe('shutdown');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCleanExit, isShutdownWith, shutdownWith, SimulatedClock, type ActorSystem, type ExitReason, type Ref } from '../../src/actors/index.js';
import { BehaviourErrorCode, Supervisor, type AutoShutdown, type RestartType, type ShutdownPolicy, type Strategy } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';
import { crash, ProbeLog, probe, type CrashReason } from './helpers.js';

/**
 * Model-based tests: random command sequences run against the real Supervisor and against a small
 * reference model of OTP's semantics, checked against each other after every command. Seeds are
 * fixed; a failure prints its seed and shrunk path (fast-check's default report).
 */

// ---- shared pieces --------------------------------------------------------------------------------

const IDS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
const SEED = 42;

const restartType = fc.constantFrom<RestartType>('permanent', 'transient', 'temporary');
const crashReason: fc.Arbitrary<CrashReason> = fc.oneof(
  fc.constant<CrashReason>('normal'),
  fc.constant<CrashReason>('shutdown'),
  fc.constantFrom('deploy', 42).map((detail): CrashReason => shutdownWith(detail)),
  fc.constant(null).map((): CrashReason => new Error('crash')),
  fc.constant<CrashReason>('kill'),
);
const childStyle = fc.record({
  trapExit: fc.boolean(),
  shutdown: fc.constantFrom<ShutdownPolicy>('brutal_kill', 1_000, 'infinity'),
});
type ChildStyle = { trapExit: boolean; shutdown: ShutdownPolicy };

/** OTP's restart decision, written out independently of the implementation's `shouldRestart`. */
function needsRestart(restart: RestartType, reason: CrashReason): boolean {
  if (restart === 'temporary') return false;
  if (restart === 'permanent') return true;
  // transient: `kill` is seen as `killed`, abnormal.
  return reason === 'kill' || !isCleanExit(reason as ExitReason);
}

function describeCrash(reason: CrashReason): string {
  if (reason instanceof Error) return 'Error';
  if (isShutdownWith(reason)) return `{shutdown,${String(reason.shutdown)}}`;
  return String(reason);
}

/** OTP's restart window, brute force: all restarts ever, counted within [now - period, now]. */
class Window {
  readonly all: number[] = [];
  constructor(
    readonly intensity: number,
    readonly periodMs: number,
  ) {}
  /** Records one restart; false when that exceeds the intensity. */
  add(now: number): boolean {
    this.all.push(now);
    return this.count(now) <= this.intensity;
  }
  count(now: number): number {
    return this.all.filter((at) => now - at <= this.periodMs).length;
  }
}

async function errorCode(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

// ---- static children: one_for_one, one_for_all, rest_for_one ---------------------------------------

interface ChildModel {
  readonly id: string;
  readonly restart: RestartType;
  /** OTP 24's significant flag: its own exit may stop the supervisor, per autoShutdown. */
  readonly significant: boolean;
  running: boolean;
  restartCount: number;
}

class StaticModel {
  children: ChildModel[] = [];
  alive = true;
  now = 0;
  readonly failNext = new Map<string, number>();
  readonly window: Window;

  constructor(
    readonly strategy: Exclude<Strategy, 'simple_one_for_one'>,
    intensity: number,
    periodMs: number,
    readonly maxChildren: number,
    readonly autoShutdown: AutoShutdown = 'never',
  ) {
    this.window = new Window(intensity, periodMs);
  }

  /** OTP's validSignificant: significant needs an autoShutdown other than never, and no permanent restart. */
  validSignificant(restart: RestartType, significant: boolean): boolean {
    return !significant || (this.autoShutdown !== 'never' && restart !== 'permanent');
  }

  find(id: string): ChildModel | undefined {
    return this.children.find((child) => child.id === id);
  }

  running(): ChildModel[] {
    return this.children.filter((child) => child.running);
  }

  #consumeFailure(id: string): boolean {
    const left = this.failNext.get(id) ?? 0;
    if (left === 0) return false;
    this.failNext.set(id, left - 1);
    return true;
  }

  #remove(child: ChildModel): void {
    this.children = this.children.filter((c) => c !== child);
  }

  #groupOf(pivot: ChildModel): ChildModel[] {
    if (this.strategy === 'one_for_one') return [pivot];
    if (this.strategy === 'one_for_all') return [...this.children];
    return this.children.slice(this.children.indexOf(pivot));
  }

  #die(): void {
    this.alive = false;
    this.children = [];
  }

  /** OTP: restart decision, add_restart, then the strategy; a failed start is retried (try_again), each attempt counted. */
  childExited(child: ChildModel, reason: CrashReason): void {
    child.running = false;
    if (!needsRestart(child.restart, reason)) {
      if (child.restart === 'temporary') this.#remove(child);
      // OTP's do_auto_shutdown, written out: only a significant child's own exit that stays down counts.
      if (!child.significant || this.autoShutdown === 'never') return;
      if (this.autoShutdown === 'any_significant') return this.#die();
      if (!this.children.some((other) => other.significant && other.running)) this.#die();
      return;
    }
    if (!this.window.add(this.now)) return this.#die();
    let pivot = child;
    for (;;) {
      // terminate_children: the rest of the group, in reverse start order; temporary ones are dropped.
      for (const sibling of this.#groupOf(pivot).reverse()) {
        if (sibling === pivot) continue;
        sibling.running = false;
        if (sibling.restart === 'temporary') this.#remove(sibling);
      }
      // start_children: every member not running, in order, up to the first failure.
      let failed: ChildModel | undefined;
      for (const member of this.#groupOf(pivot)) {
        if (member.running) continue;
        if (this.#consumeFailure(member.id)) {
          failed = member;
          break;
        }
        member.running = true;
        member.restartCount++;
      }
      if (failed === undefined) return;
      if (!this.window.add(this.now)) return this.#die();
      pivot = failed;
    }
  }

  /** Expected error code of startChild, or undefined when it starts the child. */
  startChild(id: string, restart: RestartType, significant = false): string | undefined {
    if (!this.validSignificant(restart, significant)) return BehaviourErrorCode.InvalidChildSpec;
    const existing = this.find(id);
    if (existing !== undefined) return existing.running ? BehaviourErrorCode.ChildAlreadyStarted : BehaviourErrorCode.ChildAlreadyPresent;
    if (this.children.length >= this.maxChildren) return BehaviourErrorCode.TooManyChildren;
    if (this.#consumeFailure(id)) return BehaviourErrorCode.StartFailed;
    this.children.push({ id, restart, significant, running: true, restartCount: 0 });
    return undefined;
  }

  terminateChild(id: string): string | undefined {
    const child = this.find(id);
    if (child === undefined) return BehaviourErrorCode.ChildNotFound;
    child.running = false;
    if (child.restart === 'temporary') this.#remove(child);
    return undefined;
  }

  restartChild(id: string): string | undefined {
    const child = this.find(id);
    if (child === undefined) return BehaviourErrorCode.ChildNotFound;
    if (child.running) return BehaviourErrorCode.ChildRunning;
    if (this.#consumeFailure(id)) return BehaviourErrorCode.StartFailed;
    child.running = true;
    child.restartCount++;
    return undefined;
  }

  deleteChild(id: string): string | undefined {
    const child = this.find(id);
    if (child === undefined) return BehaviourErrorCode.ChildNotFound;
    if (child.running) return BehaviourErrorCode.ChildRunning;
    this.#remove(child);
    return undefined;
  }
}

interface StaticReal {
  readonly system: ActorSystem;
  readonly clock: SimulatedClock;
  readonly log: ProbeLog;
  readonly sup: Ref;
  readonly styles: Readonly<Record<string, ChildStyle>>;
  exitReason: ExitReason | undefined;
}

type StaticCommand = fc.AsyncCommand<StaticModel, StaticReal>;

/** Compares everything observable about the real supervisor with the model. */
async function verifyStatic(model: StaticModel, real: StaticReal): Promise<void> {
  const { system, sup } = real;
  await system.settle();
  if (!model.alive) {
    expect(system.isAlive(sup), 'the supervisor should have given up').toBe(false);
    expect(real.exitReason).toBe('shutdown');
    expect(system.actorCount, 'every child is gone with its supervisor').toBe(0);
    return;
  }
  expect(system.isAlive(sup), `the supervisor gave up (${String(real.exitReason)}) but the model did not`).toBe(true);
  const status = await Supervisor.status(system, sup);
  expect(
    status.children.map((child) => ({
      id: child.id,
      running: child.state === 'running' && child.ref !== undefined && system.isAlive(child.ref),
      state: child.state,
      restart: child.restart,
      restartCount: child.restartCount,
    })),
  ).toEqual(
    model.children.map((child) => ({
      id: child.id,
      running: child.running,
      state: child.running ? 'running' : 'stopped',
      restart: child.restart,
      restartCount: child.restartCount,
    })),
  );
  expect(status.restartsInWindow).toBe(model.window.count(model.now));
  expect(status.remainingIntensity).toBe(Math.max(0, model.window.intensity - model.window.count(model.now)));
  const which = await Supervisor.whichChildren(system, sup);
  expect(which.map((entry) => [entry.id, entry.ref !== undefined])).toEqual(model.children.map((child) => [child.id, child.running]));
  const running = model.running().length;
  expect(await Supervisor.countChildren(system, sup)).toEqual({ specs: model.children.length, active: running, supervisors: 0, workers: model.children.length });
  // No orphans: the supervisor and its running children are all that live.
  expect(system.actorCount).toBe(1 + running);
}

async function currentRef(real: StaticReal, id: string): Promise<Ref> {
  const entry = (await Supervisor.whichChildren(real.system, real.sup)).find((child) => child.id === id);
  if (entry === undefined || entry.ref === undefined || entry.ref === 'restarting') throw new Error(`child ${id} is not running`);
  return entry.ref;
}

class CrashCommand implements StaticCommand {
  constructor(
    readonly pick: number,
    readonly reason: CrashReason,
  ) {}
  check(model: Readonly<StaticModel>): boolean {
    return model.alive && model.running().length > 0;
  }
  async run(model: StaticModel, real: StaticReal): Promise<void> {
    const running = model.running();
    const child = running[this.pick % running.length]!;
    const ref = await currentRef(real, child.id);
    crash(real.system, ref, this.reason);
    await real.system.settle();
    expect(real.system.isAlive(ref)).toBe(false);
    model.childExited(child, this.reason);
    await verifyStatic(model, real);
  }
  toString(): string {
    return `crash(#${this.pick}, ${describeCrash(this.reason)})`;
  }
}

class StartChildCommand implements StaticCommand {
  constructor(
    readonly id: string,
    readonly restart: RestartType,
    readonly significant = false,
  ) {}
  check(model: Readonly<StaticModel>): boolean {
    return model.alive;
  }
  async run(model: StaticModel, real: StaticReal): Promise<void> {
    const spec = { ...probe(this.id, real.log, { restart: this.restart, ...real.styles[this.id] }), significant: this.significant };
    const actual = await errorCode(Supervisor.startChild(real.system, real.sup, spec));
    expect(actual).toBe(model.startChild(this.id, this.restart, this.significant));
    await verifyStatic(model, real);
  }
  toString(): string {
    return `startChild(${this.id}, ${this.restart}${this.significant ? ', significant' : ''})`;
  }
}

/** terminateChild, restartChild or deleteChild by id: the real answer (or error code) must be the model's. */
class ChildOperationCommand implements StaticCommand {
  constructor(
    readonly operation: 'terminateChild' | 'restartChild' | 'deleteChild',
    readonly id: string,
  ) {}
  check(model: Readonly<StaticModel>): boolean {
    return model.alive;
  }
  async run(model: StaticModel, real: StaticReal): Promise<void> {
    const answer = Supervisor[this.operation](real.system, real.sup, this.id) as Promise<unknown>;
    expect(await errorCode(answer)).toBe(model[this.operation](this.id));
    await verifyStatic(model, real);
  }
  toString(): string {
    return `${this.operation}(${this.id})`;
  }
}

class AdvanceCommand implements fc.AsyncCommand<StaticModel | DynamicModel, StaticReal | DynamicReal> {
  constructor(readonly ms: number) {}
  check(model: Readonly<StaticModel | DynamicModel>): boolean {
    return model.alive;
  }
  async run(model: StaticModel | DynamicModel, real: StaticReal | DynamicReal): Promise<void> {
    real.clock.advance(this.ms);
    model.now += this.ms;
    if (model instanceof StaticModel) await verifyStatic(model, real as StaticReal);
    else await verifyDynamic(model, real as DynamicReal);
  }
  toString(): string {
    return `advance(${this.ms} ms)`;
  }
}

/**
 * Moves the clock to exactly where the oldest restart in the window is `periodMs` old (still
 * counted, as OTP's `Now - R =< Period`), or one millisecond past that (aged out).
 */
class AdvanceToEdgeCommand implements fc.AsyncCommand<StaticModel | DynamicModel, StaticReal | DynamicReal> {
  constructor(readonly past: 0 | 1) {}
  check(model: Readonly<StaticModel | DynamicModel>): boolean {
    return model.alive && model.window.count(model.now) > 0;
  }
  async run(model: StaticModel | DynamicModel, real: StaticReal | DynamicReal): Promise<void> {
    const oldest = Math.min(...model.window.all.filter((at) => model.now - at <= model.window.periodMs));
    await new AdvanceCommand(Math.max(0, oldest + model.window.periodMs + this.past - model.now)).run(model, real);
  }
  toString(): string {
    return `advanceToWindowEdge(+${this.past})`;
  }
}

class FailNextStartsCommand implements StaticCommand {
  constructor(
    readonly id: string,
    readonly count: number,
  ) {}
  check(model: Readonly<StaticModel>): boolean {
    return model.alive;
  }
  async run(model: StaticModel, real: StaticReal): Promise<void> {
    model.failNext.set(this.id, (model.failNext.get(this.id) ?? 0) + this.count);
    real.log.failNext.set(this.id, (real.log.failNext.get(this.id) ?? 0) + this.count);
  }
  toString(): string {
    return `failNextStarts(${this.id}, ${this.count})`;
  }
}

const id = fc.constantFrom(...IDS);
const staticCommands = fc.commands(
  [
    fc.tuple(fc.nat(), crashReason).map(([pick, reason]) => new CrashCommand(pick, reason)),
    fc.tuple(fc.nat(), crashReason).map(([pick, reason]) => new CrashCommand(pick, reason)),
    fc.tuple(fc.nat(), crashReason).map(([pick, reason]) => new CrashCommand(pick, reason)),
    fc.tuple(id, restartType, fc.boolean()).map(([child, restart, significant]) => new StartChildCommand(child, restart, significant)),
    fc.tuple(id, restartType).map(([child, restart]) => new StartChildCommand(child, restart)),
    id.map((child) => new ChildOperationCommand('terminateChild', child)),
    id.map((child) => new ChildOperationCommand('restartChild', child)),
    id.map((child) => new ChildOperationCommand('deleteChild', child)),
    fc.integer({ min: 0, max: 3_000 }).map((ms) => new AdvanceCommand(ms)),
    fc.constantFrom<0 | 1>(0, 1).map((past) => new AdvanceToEdgeCommand(past)),
    fc.tuple(id, fc.integer({ min: 1, max: 2 })).map(([child, count]) => new FailNextStartsCommand(child, count)),
    fc.tuple(id, fc.integer({ min: 1, max: 2 })).map(([child, count]) => new FailNextStartsCommand(child, count)),
  ],
  { maxCommands: 40, size: 'max' },
);

/** Mostly room for several restarts, sometimes none or one, so both long runs and give-ups happen. */
const intensity = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 4, max: 10 }), fc.integer({ min: 4, max: 10 }));

const staticSetup = fc.record({
  intensity,
  periodMs: fc.constantFrom(1_000, 5_000),
  maxChildren: fc.constantFrom(4, 100),
  autoShutdown: fc.constantFrom<AutoShutdown>('never', 'any_significant', 'all_significant'),
  initial: fc.uniqueArray(fc.record({ id, restart: restartType, significant: fc.boolean() }), {
    selector: (child) => child.id,
    minLength: 1,
    maxLength: 5,
  }),
  styles: fc.record(Object.fromEntries(IDS.map((child) => [child, childStyle])) as Record<string, fc.Arbitrary<ChildStyle>>),
});

type StaticSetup = typeof staticSetup extends fc.Arbitrary<infer T> ? T : never;

async function runStatic(
  strategy: Exclude<Strategy, 'simple_one_for_one'>,
  setup: StaticSetup,
  commands: Iterable<StaticCommand>,
): Promise<void> {
  const clock = new SimulatedClock();
  const system = testSystem({ clock });
  const log = new ProbeLog();
  try {
    const model = new StaticModel(
      strategy,
      setup.intensity,
      setup.periodMs,
      Math.max(setup.maxChildren, setup.initial.length),
      setup.autoShutdown,
    );
    // Initial children only where the combination is valid (the invalid ones are tried by startChild).
    const initial = setup.initial.map((child) => ({ ...child, significant: child.significant && model.validSignificant(child.restart, true) }));
    const sup = await Supervisor.start(system, {
      strategy,
      intensity: setup.intensity,
      periodMs: setup.periodMs,
      maxChildren: Math.max(setup.maxChildren, initial.length),
      autoShutdown: setup.autoShutdown,
      children: initial.map((child) => ({
        ...probe(child.id, log, { restart: child.restart, ...setup.styles[child.id] }),
        significant: child.significant,
      })),
    });
    const real: StaticReal = { system, clock, log, sup, styles: setup.styles, exitReason: undefined };
    system.watch(sup, (reason) => (real.exitReason = reason));
    for (const child of initial) {
      model.children.push({ id: child.id, restart: child.restart, significant: child.significant, running: true, restartCount: 0 });
    }
    await verifyStatic(model, real);
    await fc.asyncModelRun(() => ({ model, real }), commands);
    if (system.isAlive(sup)) expect(await Supervisor.stop(system, sup)).toBe('shutdown');
    await system.settle();
    expect(system.actorCount).toBe(0);
    expect(system.timerCount).toBe(0);
  } finally {
    system.shutdown();
  }
}

describe('Supervisor model: static children', () => {
  for (const strategy of ['one_for_one', 'one_for_all', 'rest_for_one'] as const) {
    it(`${strategy}: random crashes, child administration, time, significant children and auto_shutdown agree with the OTP model`, async () => {
      await fc.assert(
        fc.asyncProperty(staticSetup, staticCommands, (setup, commands) => runStatic(strategy, setup, commands)),
        { seed: SEED, numRuns: 200 },
      );
    });
  }
});

// ---- dynamic children: simple_one_for_one -------------------------------------------------------------

interface DynamicChildModel {
  restartCount: number;
}

class DynamicModel {
  children: DynamicChildModel[] = [];
  alive = true;
  now = 0;
  failNext = 0;
  readonly window: Window;

  constructor(
    readonly restart: RestartType,
    intensity: number,
    periodMs: number,
    readonly maxChildren: number,
  ) {
    this.window = new Window(intensity, periodMs);
  }

  #consumeFailure(): boolean {
    if (this.failNext === 0) return false;
    this.failNext--;
    return true;
  }

  startChild(): string | undefined {
    if (this.children.length >= this.maxChildren) return BehaviourErrorCode.TooManyChildren;
    if (this.#consumeFailure()) return BehaviourErrorCode.StartFailed;
    this.children.push({ restartCount: 0 });
    return undefined;
  }

  /** A dynamic child that is not restarted is forgotten (OTP); a restart keeps its place. */
  childExited(child: DynamicChildModel, reason: CrashReason): void {
    if (!needsRestart(this.restart, reason)) {
      this.children = this.children.filter((c) => c !== child);
      return;
    }
    if (!this.window.add(this.now)) return this.#die();
    while (this.#consumeFailure()) {
      if (!this.window.add(this.now)) return this.#die();
    }
    child.restartCount++;
  }

  terminateChild(child: DynamicChildModel): void {
    this.children = this.children.filter((c) => c !== child);
  }

  #die(): void {
    this.alive = false;
    this.children = [];
  }
}

interface DynamicReal {
  readonly system: ActorSystem;
  readonly clock: SimulatedClock;
  readonly log: ProbeLog;
  readonly sup: Ref;
  /** Refs of children that are gone, to check that terminateChild does not find them. */
  readonly stale: Ref[];
  exitReason: ExitReason | undefined;
}

type DynamicCommand = fc.AsyncCommand<DynamicModel, DynamicReal>;

async function verifyDynamic(model: DynamicModel, real: DynamicReal): Promise<void> {
  const { system, sup } = real;
  await system.settle();
  if (!model.alive) {
    expect(system.isAlive(sup), 'the supervisor should have given up').toBe(false);
    expect(real.exitReason).toBe('shutdown');
    expect(system.actorCount).toBe(0);
    return;
  }
  expect(system.isAlive(sup), `the supervisor gave up (${String(real.exitReason)}) but the model did not`).toBe(true);
  const status = await Supervisor.status(system, sup);
  expect(
    status.children.map((child) => ({
      id: child.id,
      alive: child.state === 'running' && child.ref !== undefined && system.isAlive(child.ref),
      restart: child.restart,
      restartCount: child.restartCount,
    })),
  ).toEqual(model.children.map((child) => ({ id: undefined, alive: true, restart: model.restart, restartCount: child.restartCount })));
  expect(status.restartsInWindow).toBe(model.window.count(model.now));
  const which = await Supervisor.whichChildren(system, sup);
  expect(which.map((entry) => entry.ref)).toEqual(status.children.map((child) => child.ref));
  expect(new Set(which.map((entry) => entry.ref)).size).toBe(which.length);
  // OTP's count_children: a simple_one_for_one supervisor has one spec, its template.
  expect(await Supervisor.countChildren(system, sup)).toEqual({
    specs: 1,
    active: model.children.length,
    supervisors: 0,
    workers: model.children.length,
  });
  expect(system.actorCount).toBe(1 + model.children.length);
}

async function dynamicRef(real: DynamicReal, index: number): Promise<Ref> {
  const entry = (await Supervisor.whichChildren(real.system, real.sup))[index];
  if (entry === undefined || entry.ref === undefined || entry.ref === 'restarting') throw new Error(`no running child #${index}`);
  return entry.ref;
}

class DynamicStartCommand implements DynamicCommand {
  check(model: Readonly<DynamicModel>): boolean {
    return model.alive;
  }
  async run(model: DynamicModel, real: DynamicReal): Promise<void> {
    expect(await errorCode(Supervisor.startChild(real.system, real.sup, []))).toBe(model.startChild());
    await verifyDynamic(model, real);
  }
  toString(): string {
    return 'startChild([])';
  }
}

class DynamicCrashCommand implements DynamicCommand {
  constructor(
    readonly pick: number,
    readonly reason: CrashReason,
  ) {}
  check(model: Readonly<DynamicModel>): boolean {
    return model.alive && model.children.length > 0;
  }
  async run(model: DynamicModel, real: DynamicReal): Promise<void> {
    const index = this.pick % model.children.length;
    const ref = await dynamicRef(real, index);
    crash(real.system, ref, this.reason);
    await real.system.settle();
    expect(real.system.isAlive(ref)).toBe(false);
    real.stale.push(ref);
    model.childExited(model.children[index]!, this.reason);
    await verifyDynamic(model, real);
  }
  toString(): string {
    return `crash(#${this.pick}, ${describeCrash(this.reason)})`;
  }
}

class DynamicTerminateCommand implements DynamicCommand {
  constructor(readonly pick: number) {}
  check(model: Readonly<DynamicModel>): boolean {
    return model.alive && model.children.length > 0;
  }
  async run(model: DynamicModel, real: DynamicReal): Promise<void> {
    const index = this.pick % model.children.length;
    const ref = await dynamicRef(real, index);
    await Supervisor.terminateChild(real.system, real.sup, ref);
    expect(real.system.isAlive(ref)).toBe(false);
    real.stale.push(ref);
    model.terminateChild(model.children[index]!);
    await verifyDynamic(model, real);
  }
  toString(): string {
    return `terminateChild(#${this.pick})`;
  }
}

class DynamicTerminateStaleCommand implements DynamicCommand {
  constructor(readonly pick: number) {}
  check(model: Readonly<DynamicModel>): boolean {
    return model.alive;
  }
  async run(model: DynamicModel, real: DynamicReal): Promise<void> {
    // OTP: a ref that has already exited is terminated fine (nothing changes); an id is simple_one_for_one.
    if (real.stale.length > 0) await Supervisor.terminateChild(real.system, real.sup, real.stale[this.pick % real.stale.length]!);
    const ops = [
      Supervisor.terminateChild(real.system, real.sup, 'a'),
      Supervisor.restartChild(real.system, real.sup, 'a'),
      Supervisor.deleteChild(real.system, real.sup, 'a'),
    ];
    for (const op of ops) {
      expect(await errorCode(op)).toBe(BehaviourErrorCode.DynamicOnly);
    }
    await verifyDynamic(model, real);
  }
  toString(): string {
    return `terminateStale(#${this.pick})`;
  }
}

class DynamicFailNextCommand implements DynamicCommand {
  constructor(readonly count: number) {}
  check(model: Readonly<DynamicModel>): boolean {
    return model.alive;
  }
  async run(model: DynamicModel, real: DynamicReal): Promise<void> {
    model.failNext += this.count;
    real.log.failNext.set('dyn', (real.log.failNext.get('dyn') ?? 0) + this.count);
  }
  toString(): string {
    return `failNextStarts(${this.count})`;
  }
}

const dynamicCommands = fc.commands(
  [
    fc.constant(new DynamicStartCommand()),
    fc.constant(new DynamicStartCommand()),
    fc.tuple(fc.nat(), crashReason).map(([pick, reason]) => new DynamicCrashCommand(pick, reason)),
    fc.tuple(fc.nat(), crashReason).map(([pick, reason]) => new DynamicCrashCommand(pick, reason)),
    fc.nat().map((pick) => new DynamicTerminateCommand(pick)),
    fc.nat().map((pick) => new DynamicTerminateStaleCommand(pick)),
    fc.integer({ min: 0, max: 3_000 }).map((ms) => new AdvanceCommand(ms) as unknown as DynamicCommand),
    fc.constantFrom<0 | 1>(0, 1).map((past) => new AdvanceToEdgeCommand(past) as unknown as DynamicCommand),
    fc.integer({ min: 1, max: 2 }).map((count) => new DynamicFailNextCommand(count)),
  ],
  { maxCommands: 40, size: 'max' },
);

const dynamicSetup = fc.record({
  restart: restartType,
  intensity,
  periodMs: fc.constantFrom(1_000, 5_000),
  maxChildren: fc.constantFrom(3, 100),
  style: childStyle,
});

describe('Supervisor model: dynamic children (simple_one_for_one)', () => {
  it('random starts, crashes, terminations and time agree with the OTP model', async () => {
    await fc.assert(
      fc.asyncProperty(dynamicSetup, dynamicCommands, async (setup, commands) => {
        const clock = new SimulatedClock();
        const system = testSystem({ clock });
        const log = new ProbeLog();
        try {
          const sup = await Supervisor.start(system, {
            strategy: 'simple_one_for_one',
            intensity: setup.intensity,
            periodMs: setup.periodMs,
            maxChildren: setup.maxChildren,
            children: [probe('dyn', log, { restart: setup.restart, ...setup.style })],
          });
          const real: DynamicReal = { system, clock, log, sup, stale: [], exitReason: undefined };
          system.watch(sup, (reason) => (real.exitReason = reason));
          const model = new DynamicModel(setup.restart, setup.intensity, setup.periodMs, setup.maxChildren);
          await verifyDynamic(model, real);
          await fc.asyncModelRun(() => ({ model, real }), commands);
          if (system.isAlive(sup)) expect(await Supervisor.stop(system, sup)).toBe('shutdown');
          await system.settle();
          expect(system.actorCount).toBe(0);
          expect(system.timerCount).toBe(0);
        } finally {
          system.shutdown();
        }
      }),
      { seed: SEED, numRuns: 250 },
    );
  });
});

import { isShutdownWith, type ActorSystem, type ExitReason, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, type ChildSpec, type RestartType, type ShutdownPolicy } from '../../src/behaviours/index.js';

/** How a test makes a child exit: a reason the child stops with, an Error it throws, or an untrappable kill. */
export type CrashReason = ExitReason | 'kill';

/** Shared by every probe of one test: what happened, in order, and which starts must fail. */
export class ProbeLog {
  readonly events: string[] = [];
  /** id → number of upcoming starts of that child that fail (its init throws). */
  readonly failNext = new Map<string, number>();
  /** id → number of times its start function ran (including failed attempts). */
  readonly attempts = new Map<string, number>();

  /** Events since the last call, to assert on one step at a time. */
  take(): string[] {
    return this.events.splice(0);
  }
}

interface ProbeOptions {
  readonly restart?: RestartType;
  readonly shutdown?: ShutdownPolicy;
  /** Traps exits: a supervisor's shutdown reaches it as a parent EXIT (a GenServer then stops, running terminate). */
  readonly trapExit?: boolean;
  /** Traps exits and ignores shutdown entirely: only `kill` stops it. */
  readonly stubborn?: boolean;
}

type ProbeCast = { readonly crash: ExitReason };

/** A GenServer child the test can crash with any reason, whose start can be made to fail. */
class Probe extends GenServer<'ping', string, ProbeCast, unknown> {
  constructor(
    readonly id: string,
    readonly log: ProbeLog,
    readonly stubborn: boolean,
  ) {
    super();
  }

  override init(): void {
    const fails = this.log.failNext.get(this.id) ?? 0;
    if (fails > 0) {
      this.log.failNext.set(this.id, fails - 1);
      this.log.events.push(`fail ${this.id}`);
      throw new Error(`start of ${this.id} failed`);
    }
    this.log.events.push(`start ${this.id}`);
    const system = this.ctx.system as ActorSystem;
    system.watch(this.ctx.self, (reason) => this.log.events.push(`stop ${this.id} ${describeReason(reason)}`));
  }

  override handleCall(): string {
    return 'pong';
  }

  override handleCast(message: ProbeCast): void {
    if (message.crash instanceof Error) throw message.crash;
    this.stop(message.crash);
  }

  override handleInfo(): void {
    // A stubborn probe traps exits and ignores them (its parent EXIT never reaches here: the runner stops on it).
  }
}

/** A child spec for a {@link Probe}. */
export function probe(id: string, log: ProbeLog, options: ProbeOptions = {}): ChildSpec {
  const { restart, shutdown, trapExit, stubborn } = options;
  return {
    id,
    ...(restart === undefined ? {} : { restart }),
    ...(shutdown === undefined ? {} : { shutdown }),
    start: ({ system, parent }) => {
      log.attempts.set(id, (log.attempts.get(id) ?? 0) + 1);
      // A stubborn child is not linked as a GenServer child (so no parent EXIT handling): the
      // supervisor links it itself, and its shutdown EXIT arrives as plain info, ignored.
      if (stubborn) {
        return GenServer.start(system, () => new Probe(id, log, true), { trapExit: true });
      }
      return GenServer.start(system, () => new Probe(id, log, false), { link: parent, trapExit: trapExit ?? false });
    },
  };
}

export function describeReason(reason: ExitReason): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return 'error';
  if (isShutdownWith(reason)) return `{shutdown,${String(reason.shutdown)}}`;
  return String(reason);
}

/** Makes the child behind `ref` exit with `reason` (from inside, so `normal` works too). */
export function crash(system: ActorSystem, ref: Ref, reason: CrashReason): void {
  if (reason === 'kill') system.exit(ref, 'kill');
  else GenServer.cast<Probe>(system, ref, { crash: reason });
}

/** The running child with this id, or undefined. */
export async function childRef(system: ActorSystem, sup: Ref, id: string): Promise<Ref | undefined> {
  const entry = (await Supervisor.whichChildren(system, sup)).find((child) => child.id === id);
  return entry?.ref === 'restarting' ? undefined : entry?.ref;
}

/** Crashes child `id` and waits until the supervisor has dealt with it. */
export async function crashChild(system: ActorSystem, sup: Ref, id: string, reason: CrashReason): Promise<void> {
  const ref = await childRef(system, sup, id);
  if (ref === undefined) throw new Error(`child ${id} is not running`);
  crash(system, ref, reason);
  await system.settle();
}

/** The rejection of `promise` (fails the test if it resolves), typed with a code and OTP's reason. */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code: string; reason?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code: string; reason?: unknown };
  }
  throw new Error('expected a rejection');
}

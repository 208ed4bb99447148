/** The actors suite on Molo: the kernel (send, spawn, idle) and the behaviours (call, restarts). */
import { ActorSystem, type ActorBehaviour, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker, type ChildEntry } from '../../src/behaviours/index.js';
import {
  MANY_ACTORS,
  RESTART_BATCH,
  SUPERVISOR_INTENSITY,
  SUPERVISOR_PERIOD_MS,
  groupRestartRow,
  idleRow,
  latencyRow,
  now,
  signal,
  throughput,
  type CallPayload,
  type ImplCases,
  type MessagePayload,
} from './cases.js';
import { placedCases } from './molo-placed.js';

/**
 * The Erlang peer runs with `-kernel logger_level none`, so it prints no crash or supervisor
 * reports; Molo's systems log none either (`logger: false`), else each restart would time the
 * three report lines written to stderr rather than the restart.
 */
const newSystem = (): ActorSystem => new ActorSystem({ logger: false });

/** A shared behaviour object: an idle actor then costs only its cell, ref and table entry. */
const IDLE: ActorBehaviour = { name: 'idle', handle() {} };

class Echo extends GenServer<CallPayload, CallPayload> {
  override handleCall(request: CallPayload): CallPayload {
    return request;
  }
}

/**
 * send puts all `n` messages in the mailbox before the actor runs (send only enqueues; no handler
 * runs in its sender's stack), so the mailbox must hold `n`: the default capacity (100,000) would
 * refuse the rest with MailboxFull, as it should in production. The peers' queues are unbounded.
 */
const sendMailbox = (n: number): { mailbox: { capacity: number } } => ({ mailbox: { capacity: Math.max(n, 1_000_000) } });

/** A child whose init reports (for the child the benchmark waits on) the moment it ran. */
class Reporter extends GenServer<never> {
  constructor(
    readonly id: number,
    readonly onInit: ((id: number, self: Ref) => void) | undefined,
  ) {
    super();
  }

  override init(): void {
    this.onInit?.(this.id, this.self);
  }
}

async function childRefs(system: ActorSystem, supervisor: Ref): Promise<Map<string, Ref>> {
  const entries: ChildEntry[] = await Supervisor.whichChildren(system, supervisor);
  const refs = new Map<string, Ref>();
  for (const entry of entries) if (entry.id !== undefined && typeof entry.ref === 'object') refs.set(entry.id, entry.ref);
  return refs;
}

/** `count` crash → restarted-init latencies (µs) against one fresh one_for_one supervisor. */
async function restartBatch(system: ActorSystem, count: number, samples: number[]): Promise<void> {
  let initAt = 0;
  let current: Ref | undefined;
  let waiting: ((ref: Ref) => void) | undefined;
  const onInit = (_id: number, self: Ref): void => {
    initAt = now();
    current = self;
    const resolve = waiting;
    waiting = undefined;
    resolve?.(self);
  };
  const supervisor = await Supervisor.start(system, {
    strategy: 'one_for_one',
    intensity: SUPERVISOR_INTENSITY,
    periodMs: SUPERVISOR_PERIOD_MS,
    children: [worker('child', () => new Reporter(0, onInit))],
  });
  for (let i = 0; i < count; i++) {
    const restarted = new Promise<Ref>((resolve) => (waiting = resolve));
    const reason = new Error('x');
    const start = now();
    system.exit(current!, reason);
    await restarted;
    samples.push((initAt - start) * 1_000);
  }
  await Supervisor.stop(system, supervisor);
}

async function restartSamples(system: ActorSystem, total: number): Promise<number[]> {
  const samples: number[] = [];
  for (let done = 0; done < total; done += RESTART_BATCH) await restartBatch(system, Math.min(RESTART_BATCH, total - done), samples);
  return samples;
}

/** `trials` crashes of the middle child of a one_for_all supervisor of `children`: ms until the last child's init ran. */
async function oneForAllTrials(system: ActorSystem, children: number, trials: number): Promise<number[]> {
  let lastInitAt = 0;
  let waiting: (() => void) | undefined;
  const last = children - 1;
  const onInit = (id: number): void => {
    if (id !== last) return;
    lastInitAt = now();
    const resolve = waiting;
    waiting = undefined;
    resolve?.();
  };
  const specs = Array.from({ length: children }, (_, id) => worker(`c${id}`, () => new Reporter(id, onInit)));
  const supervisor = await Supervisor.start(system, {
    strategy: 'one_for_all',
    intensity: SUPERVISOR_INTENSITY,
    periodMs: SUPERVISOR_PERIOD_MS,
    maxChildren: children,
    children: specs,
  });
  const victim = `c${children >> 1}`;
  const times: number[] = [];
  for (let i = 0; i < trials; i++) {
    const target = (await childRefs(system, supervisor)).get(victim)!;
    const restarted = new Promise<void>((resolve) => (waiting = resolve));
    const reason = new Error('x');
    const start = now();
    system.exit(target, reason);
    await restarted;
    times.push(lastInitAt - start);
  }
  await Supervisor.stop(system, supervisor);
  return times;
}

export const moloCases: ImplCases = {
  send: (sizes) =>
    throughput('send', 'molo', sizes, async (n) => {
      const system = newSystem();
      let handled = 0;
      const done = signal();
      const ref = system.spawn(
        {
          handle() {
            if (++handled === n) done.resolve();
          },
        },
        sendMailbox(n),
      );
      const start = now();
      for (let i = 0; i < n; i++) system.send(ref, { type: 'msg', value: i } satisfies MessagePayload);
      await done.promise;
      const ms = now() - start;
      system.shutdown();
      return ms;
    }),

  send_10k: (sizes) =>
    throughput('send_10k', 'molo', sizes, async (n) => {
      const system = newSystem();
      let handled = 0;
      const done = signal();
      const behaviour: ActorBehaviour = {
        handle() {
          if (++handled === n) done.resolve();
        },
      };
      const refs: Ref[] = new Array(MANY_ACTORS);
      for (let a = 0; a < MANY_ACTORS; a++) refs[a] = system.spawn(behaviour);
      const start = now();
      for (let i = 0; i < n; i++) system.send(refs[i % MANY_ACTORS]!, { type: 'msg', value: i } satisfies MessagePayload);
      await done.promise;
      const ms = now() - start;
      system.shutdown();
      return ms;
    }),

  call: (sizes) =>
    throughput('call', 'molo', sizes, async (n) => {
      const system = newSystem();
      const server = await GenServer.start(system, () => new Echo());
      const start = now();
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (await GenServer.call(system, server, { type: 'call', value: i })).value;
      const ms = now() - start;
      if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
      system.shutdown();
      return ms;
    }),

  spawn: (sizes) =>
    throughput('spawn', 'molo', sizes, async (n) => {
      const system = newSystem();
      const start = now();
      for (let i = 0; i < n; i++) {
        const ref = system.spawn(IDLE);
        system.exit(ref, 'kill');
      }
      const ms = now() - start;
      if (system.actorCount !== 0) throw new Error(`${system.actorCount} actors left`);
      return ms;
    }),

  idle: async (sizes) =>
    idleRow(
      'molo',
      sizes,
      (n) => {
        const system = newSystem();
        for (let i = 0; i < n; i++) system.spawn(IDLE);
        return system;
      },
      (system) => system.actorCount,
      (system) => system.shutdown(),
    ),

  restart: async (sizes) => {
    const warm = newSystem();
    await restartSamples(warm, sizes.warmup);
    warm.shutdown();
    const system = newSystem();
    const samples = await restartSamples(system, sizes.n);
    system.shutdown();
    return latencyRow('restart', 'molo', samples, { batch: RESTART_BATCH });
  },

  one_for_all: async (sizes) => {
    const system = newSystem();
    await oneForAllTrials(system, sizes.n, sizes.warmup);
    const times = await oneForAllTrials(system, sizes.n, sizes.rounds);
    system.shutdown();
    return groupRestartRow('molo', sizes.n, times);
  },

  ...placedCases,
};

/**
 * The actors suite on xstate v5, two ways:
 * - `xstate-callback`: `fromCallback` logic (xstate's lightest actor, a bare receive callback);
 *   supervision is a parent machine whose invoked children re-enter their state `onError` (a
 *   crashed child, or for one_for_all every child, is stopped and started again), which is how
 *   xstate restarts an actor.
 * - `xstate-machine`: a `createMachine` actor whose transitions run `assign` on its context: what
 *   xstate users write, and about 20× the cost of the callback actor per event.
 * Request/reply passes a resolver in the event (xstate has no call).
 */
import { assign, createActor, createMachine, fromCallback, type AnyActorRef } from 'xstate';
import {
  MANY_ACTORS,
  RESTART_BATCH,
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

type Message = MessagePayload;
type CallEvent = CallPayload & { reply: (value: number) => void };
type CrashEvent = { type: 'crash'; reason: Error };

const idleLogic = fromCallback(() => {});

/** An invoked child: reports its start (its init) and throws the reason it is sent. */
const reporterLogic = fromCallback<CrashEvent, { id: number; onInit: (id: number) => void }>(({ input, receive }) => {
  input.onInit(input.id);
  receive((event) => {
    throw event.reason;
  });
});

/** A parent machine invoking `children` reporters, restarting all of them when one fails. */
function supervisorMachine(children: number, onInit: (id: number) => void) {
  return createMachine({
    initial: 'running',
    states: {
      running: {
        invoke: Array.from({ length: children }, (_, id) => ({
          id: `c${id}`,
          src: reporterLogic,
          input: { id, onInit },
          onError: { target: 'running', reenter: true },
        })),
      },
    },
  });
}

function child(parent: AnyActorRef, id: string): AnyActorRef {
  const ref = (parent.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[id];
  if (ref === undefined) throw new Error(`no child ${id}`);
  return ref;
}

/** `count` crash → restarted-start latencies (µs) for a parent with one invoked child. */
function restartBatch(count: number, samples: number[]): void {
  let initAt = 0;
  const parent = createActor(supervisorMachine(1, () => (initAt = now()))).start();
  for (let i = 0; i < count; i++) {
    const target = child(parent, 'c0');
    const event: CrashEvent = { type: 'crash', reason: new Error('x') };
    initAt = 0;
    const start = now();
    target.send(event);
    if (initAt === 0) throw new Error('child was not restarted');
    samples.push((initAt - start) * 1_000);
  }
  parent.stop();
}

function restartSamples(total: number): number[] {
  const samples: number[] = [];
  for (let done = 0; done < total; done += RESTART_BATCH) restartBatch(Math.min(RESTART_BATCH, total - done), samples);
  return samples;
}

function oneForAllTrials(children: number, trials: number): number[] {
  let lastInitAt = 0;
  const last = children - 1;
  const parent = createActor(
    supervisorMachine(children, (id) => {
      if (id === last) lastInitAt = now();
    }),
  ).start();
  const victim = `c${children >> 1}`;
  const times: number[] = [];
  for (let i = 0; i < trials; i++) {
    const target = child(parent, victim);
    const event: CrashEvent = { type: 'crash', reason: new Error('x') };
    lastInitAt = 0;
    const start = now();
    target.send(event);
    if (lastInitAt === 0) throw new Error('children were not restarted');
    times.push(lastInitAt - start);
  }
  parent.stop();
  return times;
}

/** Milliseconds for `n` sends to a started actor, until it reports all handled; then stops it. */
async function timeSends(actor: AnyActorRef, n: number, handled: Promise<void>): Promise<number> {
  const start = now();
  for (let i = 0; i < n; i++) actor.send({ type: 'msg', value: i });
  await handled;
  const ms = now() - start;
  actor.stop();
  return ms;
}

export const xstateCases: ImplCases = {
  send: (sizes) =>
    throughput('send', 'xstate-callback', sizes, async (n) => {
      let handled = 0;
      const done = signal();
      const actor = createActor(
        fromCallback<Message>(({ receive }) => {
          receive(() => {
            if (++handled === n) done.resolve();
          });
        }),
      ).start();
      return timeSends(actor, n, done.promise);
    }),

  send_10k: (sizes) =>
    throughput('send_10k', 'xstate-callback', sizes, async (n) => {
      let handled = 0;
      const done = signal();
      const logic = fromCallback<Message>(({ receive }) => {
        receive(() => {
          if (++handled === n) done.resolve();
        });
      });
      const actors: AnyActorRef[] = new Array(MANY_ACTORS);
      for (let a = 0; a < MANY_ACTORS; a++) actors[a] = createActor(logic).start();
      const start = now();
      for (let i = 0; i < n; i++) actors[i % MANY_ACTORS]!.send({ type: 'msg', value: i });
      await done.promise;
      const ms = now() - start;
      for (const actor of actors) actor.stop();
      return ms;
    }),

  call: (sizes) =>
    throughput('call', 'xstate-callback', sizes, async (n) => {
      const server = createActor(
        fromCallback<CallEvent>(({ receive }) => {
          receive((event) => event.reply(event.value));
        }),
      ).start();
      const start = now();
      let sum = 0;
      for (let i = 0; i < n; i++) sum += await new Promise<number>((reply) => server.send({ type: 'call', value: i, reply }));
      const ms = now() - start;
      if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
      server.stop();
      return ms;
    }),

  spawn: (sizes) =>
    throughput('spawn', 'xstate-callback', sizes, async (n) => {
      const start = now();
      for (let i = 0; i < n; i++) {
        const actor = createActor(idleLogic).start();
        actor.stop();
      }
      return now() - start;
    }),

  idle: async (sizes) =>
    idleRow(
      'xstate-callback',
      sizes,
      (n) => {
        // Root actors: nothing else holds them, so the array keeps them alive (as Molo's table does).
        const actors: AnyActorRef[] = new Array(n);
        for (let i = 0; i < n; i++) actors[i] = createActor(idleLogic).start();
        return actors;
      },
      (actors) => actors.filter((actor) => actor.getSnapshot().status === 'active').length,
      (actors) => {
        for (const actor of actors) actor.stop();
      },
    ),

  restart: async (sizes) => {
    restartSamples(sizes.warmup);
    return latencyRow('restart', 'xstate-callback', restartSamples(sizes.n), { batch: RESTART_BATCH });
  },

  one_for_all: async (sizes) => {
    oneForAllTrials(sizes.n, sizes.warmup);
    return groupRestartRow('xstate-callback', sizes.n, oneForAllTrials(sizes.n, sizes.rounds));
  },
};

/** A counter machine: every `msg` assigns count + 1; the assign that reaches `target` signals. */
function counterMachine(target: number, done: () => void) {
  return createMachine({
    types: {} as { context: { count: number }; events: Message },
    context: { count: 0 },
    on: {
      msg: {
        actions: assign({
          count: ({ context }) => {
            const count = context.count + 1;
            if (count === target) done();
            return count;
          },
        }),
      },
    },
  });
}

/** An echo machine: every `call` assigns the number of calls served, then replies with the value. */
const echoMachine = createMachine({
  types: {} as { context: { served: number }; events: CallEvent },
  context: { served: 0 },
  on: {
    call: {
      actions: [assign({ served: ({ context }) => context.served + 1 }), ({ event }) => event.reply(event.value)],
    },
  },
});

export const xstateMachineCases: ImplCases = {
  send: (sizes) =>
    throughput('send', 'xstate-machine', sizes, async (n) => {
      const done = signal();
      const actor = createActor(counterMachine(n, done.resolve)).start();
      return timeSends(actor, n, done.promise);
    }),

  call: (sizes) =>
    throughput('call', 'xstate-machine', sizes, async (n) => {
      const server = createActor(echoMachine).start();
      const start = now();
      let sum = 0;
      for (let i = 0; i < n; i++) sum += await new Promise<number>((reply) => server.send({ type: 'call', value: i, reply }));
      const ms = now() - start;
      if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
      server.stop();
      return ms;
    }),
};

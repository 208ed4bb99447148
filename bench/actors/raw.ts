/**
 * The floor: an "actor" that is only an array queue drained by queueMicrotask, with no
 * addressing, no supervision and no limits. Used for send, call, spawn and idle; it has nothing
 * to restart, so restart and one_for_all are not applicable.
 */
import { MANY_ACTORS, idleRow, now, signal, throughput, type CallPayload, type ImplCases, type MessagePayload } from './cases.js';

class RawActor<M> {
  queue: M[] = [];
  head = 0;
  scheduled = false;
  stopped = false;

  constructor(readonly handler: (message: M) => void) {}

  send(message: M): void {
    if (this.stopped) return;
    this.queue.push(message);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.drain());
    }
  }

  drain(): void {
    const queue = this.queue;
    while (this.head < queue.length && !this.stopped) this.handler(queue[this.head++]!);
    queue.length = 0;
    this.head = 0;
    this.scheduled = false;
  }

  stop(): void {
    this.stopped = true;
    this.queue = [];
  }
}

const ignore = (): void => {};
/** Escapes each spawned actor, so the allocation cannot be optimised away. */
let lastSpawned: RawActor<unknown> | undefined;

type CallMessage = CallPayload & { reply: (value: number) => void };

export const rawCases: ImplCases = {
  send: (sizes) =>
    throughput('send', 'raw', sizes, async (n) => {
      let handled = 0;
      const done = signal();
      const actor = new RawActor<MessagePayload>(() => {
        if (++handled === n) done.resolve();
      });
      const start = now();
      for (let i = 0; i < n; i++) actor.send({ type: 'msg', value: i });
      await done.promise;
      return now() - start;
    }),

  send_10k: (sizes) =>
    throughput('send_10k', 'raw', sizes, async (n) => {
      let handled = 0;
      const done = signal();
      const handler = (): void => {
        if (++handled === n) done.resolve();
      };
      const actors: RawActor<MessagePayload>[] = new Array(MANY_ACTORS);
      for (let a = 0; a < MANY_ACTORS; a++) actors[a] = new RawActor<MessagePayload>(handler);
      const start = now();
      for (let i = 0; i < n; i++) actors[i % MANY_ACTORS]!.send({ type: 'msg', value: i });
      await done.promise;
      return now() - start;
    }),

  call: (sizes) =>
    throughput('call', 'raw', sizes, async (n) => {
      const server = new RawActor<CallMessage>((message) => message.reply(message.value));
      const start = now();
      let sum = 0;
      for (let i = 0; i < n; i++) sum += await new Promise<number>((reply) => server.send({ type: 'call', value: i, reply }));
      const ms = now() - start;
      if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
      return ms;
    }),

  spawn: (sizes) =>
    throughput('spawn', 'raw', sizes, async (n) => {
      const start = now();
      for (let i = 0; i < n; i++) {
        const actor = new RawActor<unknown>(ignore);
        lastSpawned = actor;
        actor.stop();
      }
      const ms = now() - start;
      if (lastSpawned?.stopped !== true) throw new Error('not stopped');
      return ms;
    }),

  idle: async (sizes) =>
    idleRow(
      'raw',
      sizes,
      (n) => {
        const actors: RawActor<unknown>[] = new Array(n);
        for (let i = 0; i < n; i++) actors[i] = new RawActor<unknown>(ignore);
        return actors;
      },
      (actors) => actors.filter((actor) => !actor.stopped).length,
      (actors) => {
        for (const actor of actors) actor.stop();
      },
    ),
};

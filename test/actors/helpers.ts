import type { ActorContext, ActorSystem, Envelope, ExitReason, Ref } from '../../src/actors/index.js';

/** A promise with its settle functions outside, to hold an async handler at a known point. */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Spawns an actor that records every message it handles, in order. */
export function recorder<M = unknown>(
  system: ActorSystem,
  options?: Parameters<ActorSystem['spawn']>[1],
): { ref: Ref; seen: Envelope<M>[] } {
  const seen: Envelope<M>[] = [];
  const ref = system.spawn<M>((message) => void seen.push(message), options);
  return { ref, seen };
}

/** Spawns an actor that keeps its context, so a test can act "as" the actor from outside. */
export function withContext(system: ActorSystem): Promise<{ ref: Ref; ctx: ActorContext }> {
  return new Promise((resolve) => {
    const ref = system.spawn({
      init(ctx) {
        resolve({ ref, ctx });
      },
      handle() {},
    });
  });
}

/** Collects the exit reasons of `refs` synchronously as they happen (a watcher from outside any actor). */
export function exitLog(system: ActorSystem, ...refs: Ref[]): Map<Ref, ExitReason> {
  const log = new Map<Ref, ExitReason>();
  for (const ref of refs) system.watch(ref, (reason) => log.set(ref, reason));
  return log;
}

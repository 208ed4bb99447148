/**
 * How many thread or process hosts boot at once in this process: at most one per CPU core, one core
 * left for the app's own loop (which leases, dispatches and settles meanwhile). A boot is CPU
 * work (a fresh isolate compiles the kernel, a loader transpiles TypeScript), so ten hosts started
 * together on two cores all come up late, and the first task waits for the slowest of them; gated,
 * the first host is up after one boot's time and the rest follow in turn. Process-wide: every pool
 * shares the same cores.
 */
import { availableParallelism } from 'node:os';

export class BootGate {
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /**
   * Runs `boot` once a slot is free, and frees it when `boot` settles. `signal` aborted while it
   * waits rejects at once with its reason: a closed executor must not wait for others' boots.
   */
  async run<T>(boot: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.#active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const turn = (): void => {
          signal?.removeEventListener('abort', leave);
          resolve();
        };
        const leave = (): void => {
          const at = this.#waiting.indexOf(turn);
          if (at !== -1) this.#waiting.splice(at, 1);
          reject(signal!.reason);
        };
        this.#waiting.push(turn);
        signal?.addEventListener('abort', leave, { once: true });
      });
    } else this.#active++;
    try {
      return await boot();
    } finally {
      // The slot passes straight to the next in line (the count stays), else it is freed.
      const next = this.#waiting.shift();
      if (next === undefined) this.#active--;
      else next();
    }
  }
}

/** Measured on 2 cores (scripts/task-host-boot.mts): two boots at once beside the loop put the first host up later than one. */
export const hostBootGate = new BootGate(Math.max(1, availableParallelism() - 1));

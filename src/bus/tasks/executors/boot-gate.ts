/**
 * How many thread or process hosts boot at once in this process: one per CPU core. A boot is CPU
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

  /** Runs `boot` once a slot is free, and frees it when `boot` settles. */
  async run<T>(boot: () => Promise<T>): Promise<T> {
    if (this.#active >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
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

export const hostBootGate = new BootGate(Math.max(1, availableParallelism() - 1));

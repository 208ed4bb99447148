/** The host boot gate: at most `limit` boots at once, in turn; a waiter whose signal aborts leaves the line. */
import { describe, expect, it } from 'vitest';
import { BootGate, hostBootGate } from '../../../src/bus/tasks/executors/boot-gate.js';
import { availableParallelism } from 'node:os';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('BootGate', () => {
  it('runs at most `limit` boots at once, the rest in the order they came', async () => {
    const gate = new BootGate(2);
    const releases = Array.from({ length: 5 }, deferred);
    const order: number[] = [];
    let active = 0;
    let most = 0;
    const runs = releases.map((release, i) =>
      gate.run(async () => {
        order.push(i);
        most = Math.max(most, ++active);
        await release.promise;
        active--;
        return i;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([0, 1]);
    releases[1]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([0, 1, 2]);
    for (const release of releases) release.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('a waiter whose signal aborts rejects at once and gives up its turn; a failed boot frees its slot', async () => {
    const gate = new BootGate(1);
    const first = deferred();
    const running = gate.run(() => first.promise.then(() => Promise.reject(new Error('boot failed'))));
    const leaving = new AbortController();
    const left = gate.run(async () => 'never', leaving.signal);
    const next = gate.run(async () => 'next');
    leaving.abort(new Error('closed'));
    await expect(left).rejects.toThrow('closed');
    first.resolve();
    await expect(running).rejects.toThrow('boot failed');
    expect(await next).toBe('next');
    expect(await gate.run(async () => 'free')).toBe('free');
  });

  it('the process-wide gate leaves one core to the loop, at least one boot', () => {
    expect(hostBootGate.limit).toBe(Math.max(1, availableParallelism() - 1));
  });
});

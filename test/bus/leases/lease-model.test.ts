/**
 * Model test: acquire, renew, release and the passing of time, run against the lease records in
 * a real SQL KV store (both backends) and against a few lines of reference model, on a simulated
 * clock. Checks who holds the lease, that tokens rise on every acquisition and only then, and that
 * a holder whose term ended can renew nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { acquireLease, readLease, releaseLease, renewLease, type LeaseRecord } from '../../../src/bus/index.js';
import { KV_BACKENDS } from '../../data/kv/stores.js';

const TTL = 10_000;
const HOLDERS = ['a', 'b', 'c'] as const;
type Holder = (typeof HOLDERS)[number];

type Step =
  | { readonly op: 'acquire' | 'renew' | 'release'; readonly holder: Holder }
  | { readonly op: 'advance'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom('acquire' as const, 'renew' as const, 'release' as const), holder: fc.constantFrom(...HOLDERS) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 4_000 }), fc.constantFrom(TTL - 1, TTL, TTL + 1)) }),
);

interface ModelLease {
  holder: Holder;
  token: number;
  /** Which write made the current version: a holder may renew only the write it knows. */
  write: number;
  expiresAt: number;
}

describe.each(KV_BACKENDS.filter((backend) => backend.name !== 'memory'))('lease records vs model on $name', (backend) => {
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());

  it('acquire / renew / release / expire agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        const clock = new SimulatedClock(0, Date.UTC(2026, 0, 1));
        const opened = await backend.open(clock, { sweepIntervalMs: 3_600_000 });
        const store = opened.store;
        let lease: ModelLease | undefined;
        let writes = 0;
        let highestToken = 0;
        const known = new Map<Holder, { record: LeaseRecord; write: number }>();
        const live = (): ModelLease | undefined => (lease !== undefined && lease.expiresAt > clock.wallNow() ? lease : undefined);
        try {
          for (const s of steps) {
            if (s.op === 'advance') {
              clock.advance(s.ms);
            } else if (s.op === 'acquire') {
              const current = live();
              const expected = current === undefined || current.holder === s.holder;
              const got = await acquireLease(store, 'molo:lease:m', s.holder, TTL);
              expect(got !== undefined, `acquire by ${s.holder}`).toBe(expected);
              if (got !== undefined) {
                // Every acquisition, re-taking one's own lease included, raises the token.
                expect(got.token).toBeGreaterThan(highestToken);
                highestToken = got.token;
                lease = { holder: s.holder, token: got.token, write: ++writes, expiresAt: clock.wallNow() + TTL };
                known.set(s.holder, { record: got, write: writes });
              }
            } else {
              const mine = known.get(s.holder);
              if (mine === undefined) continue;
              const current = live();
              const expected = current !== undefined && current.write === mine.write;
              if (s.op === 'renew') {
                const got = await renewLease(store, 'molo:lease:m', mine.record, TTL);
                expect(got !== undefined, `renew by ${s.holder}`).toBe(expected);
                if (got !== undefined) {
                  // A renewal keeps the token.
                  expect(got.token).toBe(mine.record.token);
                  lease = { ...current!, write: ++writes, expiresAt: clock.wallNow() + TTL };
                  known.set(s.holder, { record: got, write: writes });
                }
              } else {
                expect(await releaseLease(store, 'molo:lease:m', mine.record), `release by ${s.holder}`).toBe(expected);
                if (expected) lease = undefined;
              }
            }
            const stored = await readLease(store, 'molo:lease:m');
            const current = live();
            expect(stored === undefined ? undefined : { holder: stored.holder, token: stored.token }).toEqual(
              current === undefined ? undefined : { holder: current.holder, token: current.token },
            );
          }
        } finally {
          await opened.close();
        }
      }),
      { seed: 17, numRuns: 50 },
    );
  });
});

/**
 * The hybrid clock: string order is timestamp order, local timestamps never go backwards (even when
 * the physical clock does, and across a restart from the persisted high water), a received
 * timestamp precedes every later local one, and a remote one beyond the drift cap is refused and
 * counted. Properties with fast-check over random clock moves and message exchanges.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClockDriftExceeded, InvalidDataConfig, InvalidHybridTimestamp } from '../../../src/index.js';
import { decodeHlc, encodeHlc, HLC_MAX_COUNTER, HLC_ZERO, HybridClock } from '../../../src/data/replication/hlc.js';

describe('hybrid logical clock', () => {
  it('encodes fixed-width, so string order is (wall, counter) order', () => {
    fc.assert(
      fc.property(
        fc.record({ wall: fc.integer({ min: 0, max: 2 ** 44 }), counter: fc.integer({ min: 0, max: HLC_MAX_COUNTER }) }),
        fc.record({ wall: fc.integer({ min: 0, max: 2 ** 44 }), counter: fc.integer({ min: 0, max: HLC_MAX_COUNTER }) }),
        (a, b) => {
          const [ea, eb] = [encodeHlc(a), encodeHlc(b)];
          expect(decodeHlc(ea)).toEqual(a);
          const byValue = a.wall !== b.wall ? Math.sign(a.wall - b.wall) : Math.sign(a.counter - b.counter);
          expect(ea < eb ? -1 : ea > eb ? 1 : 0).toBe(byValue);
        },
      ),
    );
    expect(() => decodeHlc('12.3')).toThrow(InvalidHybridTimestamp);
  });

  it('stays monotonic when the physical clock stalls or jumps back', () => {
    let t = 1_000_000;
    const clock = new HybridClock({ now: () => t });
    const a = clock.now();
    const b = clock.now();
    t -= 5_000;
    const c = clock.now();
    expect(a < b && b < c).toBe(true);
    expect(decodeHlc(c)).toEqual({ wall: 1_000_000, counter: 2 });
    t = 2_000_000;
    expect(decodeHlc(clock.now())).toEqual({ wall: 2_000_000, counter: 0 });
  });

  it('steps the wall rather than wrapping the counter', () => {
    const clock = new HybridClock({ now: () => 5, highWater: encodeHlc({ wall: 5, counter: HLC_MAX_COUNTER }) });
    expect(decodeHlc(clock.now())).toEqual({ wall: 6, counter: 0 });
  });

  it('continues above the persisted high water after a restart with a clock behind it', () => {
    const first = new HybridClock({ now: () => 9_000 });
    first.now();
    const hw = first.now();
    const restarted = new HybridClock({ now: () => 1_000, highWater: hw });
    expect(restarted.now() > hw).toBe(true);
  });

  it('refuses and counts a remote timestamp beyond the drift cap; accepts one within it', () => {
    const clock = new HybridClock({ now: () => 100_000, maxDriftMs: 1_000 });
    expect(() => clock.receive(encodeHlc({ wall: 101_001, counter: 0 }))).toThrow(ClockDriftExceeded);
    expect(clock.accept(encodeHlc({ wall: 200_000, counter: 0 }))).toBeUndefined();
    expect(clock.refused).toBe(2);
    const remote = encodeHlc({ wall: 101_000, counter: 7 });
    const got = clock.receive(remote);
    expect(got > remote).toBe(true);
    expect(decodeHlc(got)).toEqual({ wall: 101_000, counter: 8 });
    expect(clock.last).toBe(got);
  });

  it('validates options: drift cap, unknown keys named with the nearest', () => {
    expect(() => new HybridClock({ maxDriftMs: 24 * 3600 * 1000 + 1 })).toThrow(/24 h/);
    expect(() => new HybridClock({ maxDrift: 5 } as never)).toThrow(InvalidDataConfig);
    expect(() => new HybridClock({ maxDrift: 5 } as never)).toThrow(/did you mean maxDriftMs/);
    expect(new HybridClock().last).toBe(HLC_ZERO);
  });

  it('property: three nodes exchanging stamps under skewed, wandering clocks stay monotonic, causal and within the drift cap', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('tick' as const), node: fc.nat(2), delta: fc.integer({ min: -3_000, max: 3_000 }) }),
      fc.record({ kind: fc.constant('local' as const), node: fc.nat(2) }),
      fc.record({ kind: fc.constant('send' as const), from: fc.nat(2), to: fc.nat(2) }),
      fc.record({ kind: fc.constant('restart' as const), node: fc.nat(2) }),
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -2_000, max: 2_000 }), { minLength: 3, maxLength: 3 }), fc.array(step, { maxLength: 200 }), (skews, steps) => {
        const maxDriftMs = 2_500;
        const physical = skews.map((s) => 1_000_000 + s);
        const make = (i: number, highWater?: string) => new HybridClock({ now: () => physical[i]!, maxDriftMs, ...(highWater === undefined ? {} : { highWater }) });
        const clocks = [make(0), make(1), make(2)];
        const last = clocks.map((c) => c.last);
        const seen = [...physical];
        const observe = (i: number, ts: string) => {
          expect(ts > last[i]!).toBe(true);
          // Never further ahead of the latest physical time the node has read than the drift it
          // accepts (its clock may later step back: the HLC then holds, it cannot follow).
          expect(decodeHlc(ts).wall - seen[i]!).toBeLessThanOrEqual(maxDriftMs);
          last[i] = ts;
        };
        for (const s of steps) {
          if (s.kind === 'tick') {
            physical[s.node] = Math.max(0, physical[s.node]! + s.delta);
            seen[s.node] = Math.max(seen[s.node]!, physical[s.node]!);
          }
          else if (s.kind === 'local') observe(s.node, clocks[s.node]!.now());
          else if (s.kind === 'restart') clocks[s.node] = make(s.node, last[s.node]);
          else {
            const sent = clocks[s.from]!.now();
            observe(s.from, sent);
            const before = clocks[s.to]!.refused;
            const got = clocks[s.to]!.accept(sent);
            if (got === undefined) {
              expect(clocks[s.to]!.refused).toBe(before + 1);
              expect(decodeHlc(sent).wall - physical[s.to]!).toBeGreaterThan(maxDriftMs);
            } else {
              expect(got > sent).toBe(true);
              observe(s.to, got);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

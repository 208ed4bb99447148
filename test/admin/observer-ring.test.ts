/**
 * The sample ring behind the observer's charts, against a plain array model (fast-check): after
 * any pushes it holds the last `capacity` items, oldest first, and never more.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ring } from '../../src/admin/observer/sampler.js';

describe('the observer sample ring', () => {
  it('keeps the last capacity items, oldest first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.oneof(fc.integer(), fc.constant('check')), { maxLength: 300 }), (capacity, steps) => {
        const ring = new Ring<number>(capacity);
        const model: number[] = [];
        for (const step of steps) {
          if (step === 'check') {
            expect(ring.toArray()).toEqual(model.slice(-capacity));
            continue;
          }
          ring.push(step);
          model.push(step);
          expect(ring.size).toBe(Math.min(model.length, capacity));
        }
        expect(ring.toArray()).toEqual(model.slice(-capacity));
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * S7-10's retention caps (24 h or 1 GiB) are ceilings: a stream may ask for less, and asking for
 * more is refused with StreamCapExceeded naming the cap, unless the store was opened with
 * `retentionCeilings` raising it by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamCapExceeded, StreamInvalidArgument } from '../../../src/bus/index.js';
import { STREAM_BACKENDS } from './stores.js';

const DAY = 24 * 3_600_000;
const GIB = 1_073_741_824;

for (const backend of STREAM_BACKENDS) {
  describe(`retention ceilings on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('more than 24 h or 1 GiB is refused naming the cap; less is fine', async () => {
      const store = await backend.open();
      const age = await store.createStream('week', { maxAgeMs: 7 * DAY }).catch((error: unknown) => error);
      expect(age).toBeInstanceOf(StreamCapExceeded);
      expect(age).toMatchObject({ cap: 'streams.maxAgeMs', limit: DAY, actual: 7 * DAY });
      const bytes = await store.createStream('big', { maxBytes: 2 * GIB }).catch((error: unknown) => error);
      expect(bytes).toMatchObject({ code: 'STREAM_CAP_EXCEEDED', cap: 'streams.maxBytes', limit: GIB });
      expect((await store.createStream('small', { maxAgeMs: 3_600_000, maxBytes: 1_024 })).config).toMatchObject({ maxAgeMs: 3_600_000, maxBytes: 1_024 });
      expect((await store.createStream('seed')).config).toMatchObject({ maxAgeMs: DAY, maxBytes: GIB });
      await store.close();
    });

    it('retentionCeilings raises them by name, and is itself checked', async () => {
      const store = await backend.open(undefined, { retentionCeilings: { maxAgeMs: 30 * DAY, maxBytes: 8 * GIB } });
      expect((await store.createStream('week', { maxAgeMs: 7 * DAY, maxBytes: 4 * GIB })).config).toMatchObject({ maxAgeMs: 7 * DAY, maxBytes: 4 * GIB });
      await expect(store.createStream('year', { maxAgeMs: 365 * DAY })).rejects.toMatchObject({ cap: 'streams.maxAgeMs', limit: 30 * DAY });
      await store.close();
      await expect(Promise.resolve().then(() => backend.open(undefined, { retentionCeilings: { maxAgeMs: 1_000 } }))).rejects.toBeInstanceOf(StreamInvalidArgument);
      await expect(Promise.resolve().then(() => backend.open(undefined, { retentionCeilings: { maxAge: DAY } } as never))).rejects.toThrow(/did you mean maxAgeMs/);
    });
  });
}

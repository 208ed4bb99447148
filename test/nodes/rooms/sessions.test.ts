/**
 * Sessions shared on the Postgres KV: an instance that did not create a session reads and renews
 * it, the TTL slides with use and ends it otherwise, and the rooms' authentication hook reads it from
 * a cookie or a bearer token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv } from '../../../src/data/index.js';
import { sessionAuthenticate, sessionStore } from '../../../src/nodes/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { instance } from './support.js';

let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('rooms_sessions');
});
afterAll(() => fresh.drop());

describe('sessions on the shared Postgres KV', () => {
  it('created on one instance, read and renewed on the other; expired when not renewed; as the rooms authentication hook', async () => {
    const a = await instance(fresh, 'sa');
    const b = await instance(fresh, 'sb');
    const [kvA, kvB] = [await openKv(a.db), await openKv(b.db)];
    try {
      const [onA, onB] = [sessionStore<{ user: string }>(kvA, { ttlMs: 1_000 }), sessionStore<{ user: string }>(kvB, { ttlMs: 1_000 })];
      const id = await onA.create({ user: 'ada' });
      expect(await onB.get(id)).toEqual({ user: 'ada' });
      for (let i = 0; i < 3; i++) {
        await sleep(500);
        expect(await onB.touch(id)).toEqual({ user: 'ada' });
      }
      const idle = await onA.create({ user: 'bob' });
      await sleep(600);
      await onA.touch(id);
      await sleep(600);
      expect(await onB.get(idle)).toBeUndefined();
      expect(await onA.get(id)).toEqual({ user: 'ada' });
      expect(await onA.get('../../etc')).toBeUndefined();

      const hook = sessionAuthenticate(onB);
      expect(await hook({ headers: { cookie: `x=1; molo_session=${id}` } } as never)).toEqual({ user: 'ada' });
      expect(await hook({ headers: { authorization: `Bearer ${id}` } } as never)).toEqual({ user: 'ada' });
      expect(await hook({ headers: {} } as never)).toBeUndefined();
      expect(await onA.destroy(id)).toBe(true);
      expect(await hook({ headers: { authorization: `Bearer ${id}` } } as never)).toBeUndefined();
      expect(() => sessionStore(kvA, { ttl: 5 } as never)).toThrow(/sessions\.ttl/);
    } finally {
      await kvA.close();
      await kvB.close();
      await a.stop();
      await b.stop();
    }
  });
});

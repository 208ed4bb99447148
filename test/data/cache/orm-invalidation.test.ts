/**
 * ORM writes invalidate cached reads through the ORM's write events, on both backends: the cache
 * subscribes to `orm.events`, an update purges the row's tag after COMMIT, and a rolled-back write
 * purges nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { Cache, rowTag, tableTag } from '../../../src/data/cache/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

const Account = defineModel('accounts', {
  id: field.int32().primaryKey(),
  owner: field.string(40),
});

describe.each(BACKENDS)('ORM writes invalidate the cache on $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let orm: Orm;
  let cache: Cache<string | undefined>;
  let unsubscribe: () => void;
  let computes = 0;

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    orm = new Orm(opened.db);
    await orm.createTables(Account);
    await orm.insert(Account, { id: 1, owner: 'alice' });
    cache = new Cache<string | undefined>();
    unsubscribe = cache.invalidateOn(orm.events);
    computes = 0;
  });

  afterEach(async () => {
    unsubscribe();
    await opened.dispose();
    await system.shutdown();
  });

  const owner = (): Promise<string | undefined> =>
    cache.getOrCompute(
      'account:1',
      async () => {
        computes++;
        return (await orm.find(Account, 1))?.owner;
      },
      { tags: [rowTag('accounts', 1), tableTag('accounts')] },
    );

  it('an update through the ORM purges the cached read once it commits', async () => {
    expect(await owner()).toBe('alice');
    expect(await owner()).toBe('alice');
    expect(computes).toBe(1);
    expect(cache.get('account:1')).toBe('alice');

    await orm.update(Account, { id: 1 }, { owner: 'bob' });
    expect(cache.get('account:1')).toBeUndefined();
    expect(await owner()).toBe('bob');
    expect(computes).toBe(2);
  });

  it('a write inside a transaction purges after COMMIT, and a rolled-back one purges nothing', async () => {
    expect(await owner()).toBe('alice');
    await orm.transaction(async (tx) => {
      await tx.update(Account, { id: 1 }, { owner: 'carol' });
      // Not committed yet: readers elsewhere still see alice, and so does the cache.
      expect(cache.get('account:1')).toBe('alice');
    });
    expect(cache.get('account:1')).toBeUndefined();
    expect(await owner()).toBe('carol');

    await expect(
      orm.transaction(async (tx) => {
        await tx.update(Account, { id: 1 }, { owner: 'mallory' });
        throw new Error('roll it back');
      }),
    ).rejects.toThrow('roll it back');
    expect(cache.get('account:1')).toBe('carol');
    expect(computes).toBe(2);
  });
});

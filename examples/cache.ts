/**
 * The in-process cache in front of the ORM on SQLite in a temp directory: getOrCompute with
 * singleflight (concurrent misses load once), a synchronous hit, a cached "not found", tags, and
 * invalidation from the ORM's write events.
 * Run: npm run example examples/cache.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { Cache, openSqlite, rowTag, tableTag } from 'molo/data';
import { defineModel, field, Orm, type RowOf } from 'molo/data/orm';

const User = defineModel('users', {
  id: field.int64().primaryKey().autoIncrement(),
  name: field.string(80),
});
type UserRow = RowOf<typeof User>;

const dir = mkdtempSync(join(tmpdir(), 'molo-cache-example-'));
const system = new ActorSystem();
try {
  const db = await openSqlite(system, { file: join(dir, 'app.db') });
  const orm = new Orm(db);
  await orm.createTables(User);
  const [ada] = await orm.insertMany(User, [{ name: 'Ada' }, { name: 'Bob' }]);

  const users = new Cache<UserRow>({ name: 'users', maxEntries: 10_000 });
  const stopInvalidation = users.invalidateOn(orm.events); // each write drops its row and table tags

  let loads = 0;
  const load = (id: bigint) =>
    users.getOrCompute(
      `user:${id}`,
      async () => {
        loads++;
        return orm.query(User).where({ id }).first();
      },
      { ttlMs: 30_000, tags: [rowTag('users', id), tableTag('users')], negativeTtlMs: 5_000 },
    );

  const three = await Promise.all([load(ada!.id), load(ada!.id), load(ada!.id)]);
  console.log(`three concurrent misses: ${three.map((u) => u?.name).join(', ')}, loaded ${loads} time(s)`);
  console.log(`synchronous hit: ${users.get(`user:${ada!.id}`)?.name}`);

  await load(999n);
  await load(999n);
  console.log(`missing user 999 cached as a miss: ${users.has('user:999')}, loads so far ${loads}`);

  await orm.update(User, ada!, { name: 'Ada Lovelace' }); // the write event drops user:1
  console.log(`after update, cached: ${users.get(`user:${ada!.id}`) !== undefined}, reloaded: ${(await load(ada!.id))?.name}`);

  const purged = users.purgeTag(tableTag('users'));
  const { hits, misses, computes, coalesced, invalidations } = users.stats();
  console.log(`purged ${purged}; stats: hits ${hits}, misses ${misses}, computes ${computes}, coalesced ${coalesced}, invalidations ${invalidations}`);

  stopInvalidation();
  await db.close();
} finally {
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}

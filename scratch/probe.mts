import { ActorSystem } from '../src/actors/index.js';
import { createPostgresPool } from '../src/data/postgres.js';
const cases: Record<string, any> = {
  downPort: { host: '127.0.0.1', port: 1, user: 'postgres' },
  missingDb: { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'no_such_db_xyz' },
  malformed: { host: '127.0.0.1', port: 'abc', user: 'postgres' },
  typo: { hostname: '127.0.0.1', user: 'postgres' },
};
for (const [name, cfg] of Object.entries(cases)) {
  const system = new ActorSystem({ node: 'p' });
  const t0 = Date.now();
  try {
    const db = await createPostgresPool(system, cfg);
    const t1 = Date.now();
    try { await db.query('SELECT 1'); console.log(name, 'ok?'); } catch (e: any) { console.log(name, 'query failed after', Date.now() - t0, 'ms (create', t1 - t0, 'ms):', e.code, e.message); }
    await db.close();
  } catch (e: any) { console.log(name, 'create failed after', Date.now() - t0, 'ms:', e.code, e.message); }
  await system.shutdown();
}

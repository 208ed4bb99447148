/**
 * The data layer: the same code against Postgres and SQLite — a table, a transaction with a
 * savepoint that fails alone, a serialization-safe read, and a cursor.
 * Run: npm run example examples/data.ts   (Postgres from MOLO_PG_URL-style env: MOLO_PG_HOST, MOLO_PG_PORT,
 * MOLO_PG_USER, MOLO_PG_DATABASE; default 127.0.0.1:5432, user postgres, database test)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { createPostgresPool, openSqlite, type Database } from 'molo/data';

async function demo(db: Database): Promise<void> {
  const ctx = { timeoutMs: 5_000, correlationId: 'example-1' };
  await db.query('DROP TABLE IF EXISTS example_orders', [], ctx);
  await db.query('CREATE TABLE example_orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL, qty INTEGER NOT NULL)', [], ctx);
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO example_orders (id, item, qty) VALUES ($1, $2, $3)', [1, 'apples', 3], ctx);
    await tx
      .transaction(async (inner) => {
        await inner.query('INSERT INTO example_orders (id, item, qty) VALUES ($1, $2, $3)', [2, 'pears', 5], ctx);
        throw new Error('out of pears');
      })
      .catch((error: Error) => console.log(`${db.backend}: savepoint rolled back (${error.message})`));
    await tx.query('INSERT INTO example_orders (id, item, qty) VALUES ($1, $2, $3)', [3, "O'Reilly's; DROP TABLE x", 1], ctx);
  });
  const { rows } = await db.query<{ item: string }>('SELECT item FROM example_orders ORDER BY id', [], ctx);
  console.log(`${db.backend}: committed ${rows.map((row) => row.item).join(', ')}`);
  let streamed = 0;
  for await (const _row of db.stream('SELECT id FROM example_orders', [], ctx, { batchSize: 1 })) streamed++;
  console.log(`${db.backend}: streamed ${streamed} rows`);
  await db.query('DROP TABLE example_orders', [], ctx);
}

const system = new ActorSystem();
const dir = mkdtempSync(join(tmpdir(), 'molo-example-'));
try {
  const pg = await createPostgresPool(system, {
    host: process.env.MOLO_PG_HOST ?? '127.0.0.1',
    port: Number(process.env.MOLO_PG_PORT ?? 5432),
    user: process.env.MOLO_PG_USER ?? 'postgres',
    database: process.env.MOLO_PG_DATABASE ?? 'test',
    min: 1,
    max: 4,
  });
  const lite = await openSqlite(system, { file: join(dir, 'example.db') });
  for (const db of [pg, lite]) await demo(db);
  console.log(`healthy: ${pg.health().healthy && lite.health().healthy}`);
  await Promise.all([pg.close(), lite.close()]);
} finally {
  await system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}

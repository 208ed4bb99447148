/**
 * Molo's stream store as a contender: SQLite (a file of its own, in a temp directory) or Postgres
 * (the bench database). Publishes are issued PUBLISH_WINDOW at a time and group-committed by the
 * store; the consumer fetches FETCH_BATCH and acks each delivery without waiting (the store groups
 * the acks into one statement), waiting for all acks at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActorSystem } from '../../src/actors/index.js';
import { openStreams, type SqlStreamStore } from '../../src/bus/index.js';
import type { Database } from '../../src/data/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import type { BenchServer } from '../data/server.js';
import { FETCH_BATCH, PUBLISH_WINDOW, type StreamContender } from './contender.js';

const log = (message: string): void => void process.stderr.write(`${message}\n`);

export function moloContender(system: ActorSystem, backend: 'sqlite' | 'postgres', pg: BenchServer | undefined): StreamContender {
  let store: SqlStreamStore | undefined;
  let db: Database | undefined;
  let dir: string | undefined;
  let round = 0;
  let stream = 'bench';
  const s = (): SqlStreamStore => store!;

  const consumeLoop = async (n: number, done: () => boolean = () => false): Promise<number> => {
    const seen = new Set<number>();
    const acks: Promise<void>[] = [];
    while (seen.size < n && !done()) {
      const deliveries = await s().fetch(stream, 'c', { batch: FETCH_BATCH, maxWaitMs: 1_000 });
      for (const delivery of deliveries) {
        seen.add(delivery.seq);
        acks.push(delivery.ack());
      }
      if (acks.length >= 20_000) await Promise.all(acks.splice(0));
    }
    await Promise.all(acks);
    return seen.size;
  };

  const publishLoop = async (n: number, payload: Buffer): Promise<void> => {
    let inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      inFlight.push(s().publish(stream, payload));
      if (inFlight.length >= PUBLISH_WINDOW) {
        await Promise.all(inFlight);
        inFlight = [];
      }
    }
    await Promise.all(inFlight);
  };

  return {
    impl: `molo-${backend}`,
    async open() {
      if (backend === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'molo-bench-streams-'));
        log(`sqlite: files in ${dir}`);
        // A file of its own, as openSqliteStreams makes; opened here to measure its pages.
        db = await openSqlite(system, { file: join(dir, 'streams.db'), readers: 1, name: 'bench-streams' });
      } else {
        if (pg === undefined) throw new Error('postgres unavailable');
        db = await createPostgresPool(system, { host: pg.host, port: pg.port, user: pg.user, database: pg.database, min: 4, max: 8 });
      }
      store = await openStreams(db, { name: 'bench' });
    },
    async reset() {
      stream = `bench${++round}`;
      await s().createStream(stream);
      await s().createConsumer(stream, 'c', { maxAckPending: 100_000 });
    },
    publish: publishLoop,
    consume: (n) => consumeLoop(n),
    async endToEnd(n, payload) {
      const [, seen] = await Promise.all([publishLoop(n, payload), consumeLoop(n)]);
      return seen;
    },
    async retainedBytes() {
      if (backend === 'sqlite') {
        const { rows } = await db!.query('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()');
        return { bytes: Number(rows[0]!.n), where: 'disk (database pages, WAL frames included)' };
      }
      const { rows } = await db!.query(`SELECT pg_total_relation_size('${s().tables.msgs}') AS n`);
      return { bytes: Number(rows[0]!.n), where: 'disk (msgs table + index)' };
    },
    async close() {
      await store?.close();
      await db?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The SQLite cases: Molo (better-sqlite3 in a worker thread, requests issued concurrently) against
 * better-sqlite3 called synchronously on the main thread. Both files are WAL with synchronous=NORMAL.
 * - sqlite_insert: `n` inserts of (int, text, real) in one transaction, into a fresh table;
 * - sqlite_select: `n` point selects by primary key over a table of `n` rows, in a scattered order.
 * - sqlite_insert_awaited / sqlite_select_awaited: `awaited` statements, each awaited before the
 *   next (what a request handler does; inserts autocommit), against a plain worker thread running
 *   better-sqlite3 with one postMessage per statement each way (plain-worker.ts).
 * - sqlite_bulk_insert: `n` rows in one `queryMany` (one transaction, one promise; totals only, as
 *   a bulk load asks) against better-sqlite3 inserting them in one transaction on the main thread.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/database.js';
import type { MoloEntry, OpenSqlite } from './molo.js';
import { PlainSqliteWorker } from './plain-worker.js';
import { issueAll, sumOf, type Absent, type CaseSpec, type Contender } from './rounds.js';

export const SQLITE_CASES = ['sqlite_insert', 'sqlite_select', 'sqlite_insert_awaited', 'sqlite_select_awaited', 'sqlite_bulk_insert'] as const;

export interface SqliteSizes {
  readonly n: number;
  /** Statements of the awaited cases. */
  readonly awaited: number;
  readonly rounds: number;
  readonly warmup: number;
}

const CREATE = 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL)';
const INSERT = 'INSERT INTO items (id, name, score) VALUES (?, ?, ?)';
const SELECT = 'SELECT id, name, score FROM items WHERE id = ?';

/** A fixed scatter of 1..n (n below 1,000,003 and coprime with the step): the same order for both. */
const scattered = (i: number, n: number): number => ((i * 1_000_003) % n) + 1;

function openDirect(file: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

/** A Molo database on `file` running `body` per timed run; `freshTable`: a new items table before each. */
function moloOn(system: ActorSystem, open: OpenSqlite, file: string, freshTable: boolean, body: (db: Database, n: number) => Promise<number>): Contender {
  let db: Database | undefined;
  return {
    impl: 'molo',
    open: async () => void (db = await open(system, { file })),
    reset: freshTable
      ? async () => {
          await db!.query('DROP TABLE IF EXISTS items');
          await db!.query(CREATE);
        }
      : undefined,
    run: (n) => body(db!, n),
    close: async () => {
      const current = db;
      db = undefined;
      await current?.close();
    },
  };
}

/** Molo's insert and select runs: every request issued at once, the worker batches as it may. */
function moloContender(system: ActorSystem, open: OpenSqlite, file: string, work: 'insert' | 'select'): Contender {
  return moloOn(system, open, file, work === 'insert', (db, n) =>
    work === 'insert'
      ? db.transaction(async (tx) => sumOf(await issueAll(n, (i) => tx.query(INSERT, [i + 1, `name-${i + 1}`, i * 0.5])), (r) => r.affected))
      : issueAll(n, (i) => db.query(SELECT, [scattered(i, n)])).then((results) => sumOf(results, (r) => r.rows[0]!.id as number)),
  );
}

/** Each statement awaited before the next, on Molo. */
function moloAwaited(system: ActorSystem, open: OpenSqlite, file: string, work: 'insert' | 'select'): Contender {
  return moloOn(system, open, file, work === 'insert', async (db, n) => {
    let sum = 0;
    if (work === 'insert') for (let i = 0; i < n; i++) sum += (await db.query(INSERT, [i + 1, `name-${i + 1}`, i * 0.5])).affected;
    else for (let i = 0; i < n; i++) sum += (await db.query(SELECT, [scattered(i, n)])).rows[0]!.id as number;
    return sum;
  });
}

/** `n` rows through one `queryMany`. */
function moloBulk(system: ActorSystem, open: OpenSqlite, file: string): Contender {
  return moloOn(system, open, file, true, async (db, n) => {
    const rows = new Array<[number, string, number]>(n);
    for (let i = 0; i < n; i++) rows[i] = [i + 1, `name-${i + 1}`, i * 0.5];
    return (await db.queryMany(INSERT, rows, undefined, { results: false })).affected;
  });
}

/** Each statement awaited before the next, on a plain worker thread. */
function plainWorkerAwaited(file: string, work: 'insert' | 'select'): Contender {
  let worker: PlainSqliteWorker | undefined;
  return {
    impl: 'plain-worker',
    open: async () => void (worker = new PlainSqliteWorker(file)),
    reset:
      work === 'insert'
        ? async () => {
            await worker!.exec('DROP TABLE IF EXISTS items');
            await worker!.exec(CREATE);
          }
        : undefined,
    run: async (n) => {
      const w = worker!;
      let sum = 0;
      if (work === 'insert') for (let i = 0; i < n; i++) sum += await w.run(INSERT, [i + 1, `name-${i + 1}`, i * 0.5]);
      else for (let i = 0; i < n; i++) sum += (await w.get(SELECT, [scattered(i, n)]))!.id as number;
      return sum;
    },
    close: async () => void (await worker?.close()),
  };
}

function directInsert(file: string): Contender {
  let db: BetterSqlite3.Database | undefined;
  return {
    impl: 'better-sqlite3',
    open: async () => void (db = openDirect(file)),
    reset: async () => {
      db!.exec('DROP TABLE IF EXISTS items');
      db!.exec(CREATE);
    },
    run: async (n) => {
      const insert = db!.prepare(INSERT);
      const all = db!.transaction((count: number) => {
        let affected = 0;
        for (let i = 0; i < count; i++) affected += insert.run(i + 1, `name-${i + 1}`, i * 0.5).changes;
        return affected;
      });
      return all(n);
    },
    close: async () => void db?.close(),
  };
}

function directSelect(file: string): Contender {
  let db: BetterSqlite3.Database | undefined;
  return {
    impl: 'better-sqlite3',
    open: async () => void (db = openDirect(file)),
    run: async (n) => {
      const select = db!.prepare<[number], { id: number }>(SELECT);
      let sum = 0;
      for (let i = 0; i < n; i++) sum += select.get(scattered(i, n))!.id;
      return sum;
    },
    close: async () => void db?.close(),
  };
}

/** The select cases read a table of `rows` rows, written here before any timing. */
function fillSelectFile(file: string, rows: number): void {
  const db = openDirect(file);
  try {
    db.exec(CREATE);
    const insert = db.prepare(INSERT);
    db.transaction(() => {
      for (let i = 1; i <= rows; i++) insert.run(i, `name-${i}`, i * 0.5);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

export interface MoloSqlite {
  readonly system: ActorSystem;
  readonly open: MoloEntry<OpenSqlite>;
}

/** `dir` is a fresh temporary directory the suite removes afterwards. */
export function sqliteCases(dir: string, sizes: SqliteSizes, molo: MoloSqlite): CaseSpec[] {
  const selectFile = join(dir, 'select.db');
  fillSelectFile(selectFile, sizes.n);
  const moloOr = (file: string, work: 'insert' | 'select'): Contender | Absent =>
    molo.open.fn === undefined ? { impl: 'molo', unavailable: molo.open.unavailable! } : moloContender(molo.system, molo.open.fn, file, work);
  const sum = (n: number): number => (n * (n + 1)) / 2;
  const available = (make: (open: OpenSqlite) => Contender): Contender | Absent =>
    molo.open.fn === undefined ? { impl: 'molo', unavailable: molo.open.unavailable! } : make(molo.open.fn);
  // The awaited select reads ids 1..awaited (scattered over the first `awaited` rows of the table).
  const awaited = { n: sizes.awaited, warmupN: Math.max(50, Math.round(sizes.awaited / 5)), rounds: sizes.rounds };
  return [
    {
      name: 'sqlite_insert',
      n: sizes.n,
      warmupN: sizes.warmup,
      rounds: sizes.rounds,
      unit: 'inserts',
      expected: (n) => n,
      contenders: [moloOr(join(dir, 'insert-molo.db'), 'insert'), directInsert(join(dir, 'insert-direct.db'))],
    },
    {
      name: 'sqlite_select',
      n: sizes.n,
      // The warm-up reads ids 1..warmup of the same table; its checksum is over those.
      warmupN: sizes.warmup,
      rounds: sizes.rounds,
      unit: 'selects',
      expected: sum,
      contenders: [moloOr(selectFile, 'select'), directSelect(selectFile)],
    },
    {
      name: 'sqlite_insert_awaited',
      ...awaited,
      unit: 'inserts',
      expected: (n) => n,
      contenders: [
        available((open) => moloAwaited(molo.system, open, join(dir, 'awaited-molo.db'), 'insert')),
        plainWorkerAwaited(join(dir, 'awaited-plain.db'), 'insert'),
      ],
    },
    {
      name: 'sqlite_select_awaited',
      ...awaited,
      unit: 'selects',
      expected: sum,
      contenders: [available((open) => moloAwaited(molo.system, open, selectFile, 'select')), plainWorkerAwaited(selectFile, 'select')],
    },
    {
      name: 'sqlite_bulk_insert',
      n: sizes.n,
      warmupN: sizes.warmup,
      rounds: sizes.rounds,
      unit: 'rows',
      expected: (n) => n,
      contenders: [available((open) => moloBulk(molo.system, open, join(dir, 'bulk-molo.db'))), directInsert(join(dir, 'bulk-direct.db'))],
    },
  ];
}

// The plain worker thread the awaited SQLite cases compare Molo against: better-sqlite3 in a
// worker_threads Worker, one postMessage per statement each way, no batching, no actor.
// Plain JavaScript so the thread needs no TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const statements = new Map();
const prepared = (sql) => {
  let stmt = statements.get(sql);
  if (stmt === undefined) statements.set(sql, (stmt = db.prepare(sql)));
  return stmt;
};

parentPort.on('message', (message) => {
  const { id, sql, params, kind } = message;
  try {
    if (kind === 'exec') {
      db.exec(sql);
      parentPort.postMessage({ id, ok: true });
    } else if (kind === 'get') {
      parentPort.postMessage({ id, row: prepared(sql).get(...params) });
    } else {
      const info = prepared(sql).run(...params);
      parentPort.postMessage({ id, changes: info.changes });
    }
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});

/**
 * Crash safety, on both stores: a child process publishes and acks in a loop and is SIGKILLed at a
 * random point, again and again (20 kills per store). After each kill the parent checks, on the
 * store as the next process finds it: every publish that had resolved is in the stream with its
 * payload, sequences have no gaps, and no message acked before is ever delivered again.
 *
 * The child runs the project's code transpiled to JavaScript once (esbuild, file by file), since
 * starting tsx per child costs seconds on a loaded machine; each child is started (and opens the
 * store) while the parent checks the run before, then waits for `GO`.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlStreamStore } from '../../../src/bus/index.js';
import { buildForChildren } from './child-build.js';
import { STREAM_BACKENDS } from './stores.js';

const KILLS = 20;

let build: ReturnType<typeof buildForChildren>;

beforeAll(() => {
  build = buildForChildren('test/bus/streams/fixtures/crash-child.ts');
});
afterAll(() => build.remove());

interface RunLog {
  readonly published: Map<number, string>;
  readonly delivered: number[];
  readonly acked: number[];
}

interface Child {
  /** Starts the run: the kill comes `killAfterMs` after the child is ready; answers what it reported. */
  go(killAfterMs: number): Promise<RunLog>;
}

/**
 * Spawns the child, which loads the code, opens the store and waits: a run's start-up overlaps the
 * parent's check of the run before.
 */
function spawnChild(env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [build.script], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const log: RunLog = { published: new Map(), delivered: [], acked: [] };
  let buffer = '';
  let stderr = '';
  let killAfterMs = 0;
  let timer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const [kind, a, b] = line.split(' ');
      if (kind === 'READY' && timer === undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      else if (kind === 'P') log.published.set(Number(a), b!);
      else if (kind === 'D') log.delivered.push(Number(a));
      else if (kind === 'A') log.acked.push(Number(a));
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<RunLog>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(log);
      else reject(new Error(`child exited with ${code ?? signal} before the kill: ${stderr.slice(-2_000)}`));
    });
  });
  exited.catch(() => undefined); // observed by go(); a child never started is killed by the test's end
  return {
    go(ms) {
      killAfterMs = ms;
      child.stdin.end('GO\n');
      return exited;
    },
  };
}

describe.each(STREAM_BACKENDS)('crash safety on $name', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  it(`keeps every resolved publish, no gaps, no redelivery of acked messages across ${KILLS} SIGKILLs`, async () => {
    const table = `crash${process.pid}`;
    const env: NodeJS.ProcessEnv =
      backend.name === 'postgres'
        ? { CRASH_BACKEND: 'postgres', CRASH_PG_HOST: backend.pg!.host, CRASH_PG_PORT: String(backend.pg!.port), CRASH_PG_USER: backend.pg!.user, CRASH_PG_DB: backend.pg!.database }
        : { CRASH_BACKEND: 'sqlite', CRASH_FILE: backend.file! };
    const published = new Map<number, string>();
    const acked = new Set<number>();
    let deliveries = 0;
    const childOf = (run: number): Child => spawnChild({ ...env, CRASH_RUN: String(run), CRASH_TABLE: table });
    let next = childOf(0);
    for (let run = 0; run < KILLS; run++) {
      const log = await next.go(50 + Math.floor(Math.random() * 400));
      if (run + 1 < KILLS) next = childOf(run + 1);
      // No message acked in an earlier run (or earlier in this one) is delivered again.
      const ackedThisRun = new Set<number>();
      const ackIndex = new Map(log.acked.map((seq, index) => [seq, index]));
      for (const seq of log.delivered) expect(acked.has(seq), `seq ${seq} delivered again after its ack`).toBe(false);
      for (const seq of log.acked) ackedThisRun.add(seq);
      expect(ackIndex.size).toBe(log.acked.length);
      for (const seq of ackedThisRun) acked.add(seq);
      for (const [seq, id] of log.published) published.set(seq, id);
      deliveries += log.delivered.length;

      // The store as the next process finds it (opened without creating tables: the parent only reads
      // while the next child opens its store).
      const store = new SqlStreamStore(backend.db, { table });
      try {
        const info = await store.streamInfo('crash');
        // Gapless, from one snapshot (a COMMIT the killed child sent may still land while we look):
        // lastSeq retained messages, lastSeq distinct sequences from 1 to lastSeq (aggregated: the
        // stream may pass maxRows).
        const t = store.tables;
        const { rows } = await backend.db.query(
          `SELECT s.last_seq, s.msgs, (SELECT count(*) FROM ${t.msgs}) AS n, (SELECT count(DISTINCT seq) FROM ${t.msgs}) AS d,
            (SELECT min(seq) FROM ${t.msgs}) AS lo, (SELECT max(seq) FROM ${t.msgs}) AS hi FROM ${t.streams} s WHERE s.name = 'crash'`,
        );
        const span = rows[0]!;
        const lastSeq = Number(span.last_seq);
        expect(lastSeq).toBeGreaterThanOrEqual(info.lastSeq);
        expect([Number(span.msgs), Number(span.n), Number(span.d), Number(span.lo ?? 1), Number(span.hi ?? 0)]).toEqual([lastSeq, lastSeq, lastSeq, 1, lastSeq]);
        // Every resolved publish, with its payload (read in pages, not one statement per message).
        const stored = new Map<number, string>();
        for (let after = 0, more = true; more; ) {
          const page = await backend.db.query(`SELECT seq, payload FROM ${t.msgs} WHERE seq > ${after} ORDER BY seq LIMIT 2000`);
          for (const row of page.rows) stored.set((after = Number(row.seq)), Buffer.from(row.payload as Uint8Array).toString());
          more = page.rows.length === 2_000;
        }
        for (const [seq, id] of published) expect(stored.get(seq), `resolved publish ${seq}`).toBe(id);
        expect((await store.getMessage('crash', lastSeq))?.payload.toString()).toBe(stored.get(lastSeq));
        for (const seq of acked) expect(seq).toBeLessThanOrEqual(lastSeq);
      } finally {
        await store.close();
      }
    }
    expect(published.size).toBeGreaterThan(0);
    expect(acked.size).toBeGreaterThan(0);
    expect(deliveries).toBeGreaterThan(0);
  }, 600_000);
});

/**
 * Crash safety, on both stores: a child process publishes and acks in a loop and is SIGKILLed at a
 * random point, again and again (20 kills per store). After each kill the parent checks, on the
 * store as the next process finds it: every publish that had resolved is in the stream with its
 * payload, sequences have no gaps, and no message acked before is ever delivered again.
 *
 * The child runs the project's code transpiled to JavaScript once (esbuild, file by file), since
 * starting tsx per child costs seconds on a loaded machine.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** Runs the child until it is ready plus a random while, then SIGKILLs it; answers what it reported. */
function runAndKill(env: NodeJS.ProcessEnv, killAfterMs: number): Promise<RunLog> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [build.script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const log: RunLog = { published: new Map(), delivered: [], acked: [] };
    let buffer = '';
    let stderr = '';
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
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(log);
      else reject(new Error(`child exited with ${code ?? signal} before the kill: ${stderr.slice(-2_000)}`));
    });
  });
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
    for (let run = 0; run < KILLS; run++) {
      const log = await runAndKill({ ...env, CRASH_RUN: String(run), CRASH_TABLE: table }, 50 + Math.floor(Math.random() * 400));
      // No message acked in an earlier run (or earlier in this one) is delivered again.
      const ackedThisRun = new Set<number>();
      const ackIndex = new Map(log.acked.map((seq, index) => [seq, index]));
      for (const seq of log.delivered) expect(acked.has(seq), `seq ${seq} delivered again after its ack`).toBe(false);
      for (const seq of log.acked) ackedThisRun.add(seq);
      expect(ackIndex.size).toBe(log.acked.length);
      for (const seq of ackedThisRun) acked.add(seq);
      for (const [seq, id] of log.published) published.set(seq, id);
      deliveries += log.delivered.length;

      // The store as the next process finds it.
      const store = await backend.open(undefined, { table });
      try {
        const info = await store.streamInfo('crash');
        expect(info.messages).toBe(info.lastSeq);
        for (const [seq, id] of published) expect((await store.getMessage('crash', seq))?.payload.toString(), `resolved publish ${seq}`).toBe(id);
        // Gapless: lastSeq distinct sequences, from 1 to lastSeq (aggregated: the stream may pass maxRows).
        const { rows } = await backend.db.query(
          `SELECT count(*) AS n, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi FROM ${store.tables.msgs}`,
        );
        const span = rows[0]!;
        expect([Number(span.n), Number(span.d), Number(span.lo ?? 1), Number(span.hi ?? 0)]).toEqual([info.lastSeq, info.lastSeq, 1, info.lastSeq]);
        for (const seq of acked) expect(seq).toBeLessThanOrEqual(info.lastSeq);
      } finally {
        await store.close();
      }
    }
    expect(published.size).toBeGreaterThan(0);
    expect(acked.size).toBeGreaterThan(0);
    expect(deliveries).toBeGreaterThan(0);
  }, 600_000);
});

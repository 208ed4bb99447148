/**
 * Runs once before any test file: makes sure the Postgres the data tests use answers.
 *
 * The tests read `MOLO_PG_HOST`, `MOLO_PG_PORT` and `MOLO_PG_USER` (default 127.0.0.1:5432, user
 * `postgres`, trust auth; see test/support/pg.ts). When nothing answers there, a throwaway server
 * is started with the machine's `initdb`/`pg_ctl` on a free port and exported through those
 * variables (test files run in child processes started after this, which inherit them); it is
 * removed at the end of the run. Without `initdb` (or with `MOLO_PG_NO_THROWAWAY=1`, for a CI that
 * must use its own server), the run stops here with one message saying what to start, rather than
 * running hundreds of tests that fail one by one. test/support/global-setup.test.ts runs both paths.
 */
import { execFile } from 'node:child_process';
import { startCluster, type Cluster } from './pg-cluster.js';

const host = process.env.MOLO_PG_HOST ?? '127.0.0.1';
const port = Number(process.env.MOLO_PG_PORT ?? 5432);
const user = process.env.MOLO_PG_USER ?? 'postgres';
/** How long the probe may take: a closed port is refused at once, a silent host times out here. */
const PROBE_TIMEOUT_S = 2;

let cluster: Cluster | undefined;

export async function setup(): Promise<void> {
  const probe = await answers(host, port, user);
  if (probe === true) return;
  try {
    if (process.env.MOLO_PG_NO_THROWAWAY === '1') throw new Error('MOLO_PG_NO_THROWAWAY=1 forbids starting one');
    cluster = await startCluster({ trustSuperuser: user });
  } catch (error) {
    throw new Error(
      `The tests need Postgres: nothing answers as user '${user}' on ${host}:${port} (${probe}), ` +
        `and no throwaway server could be started (${firstLine((error as Error).message)}). ` +
        `Start one with trust auth, e.g. \`docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16\`, ` +
        `or point MOLO_PG_HOST / MOLO_PG_PORT / MOLO_PG_USER at one; or install the Postgres server binaries (initdb, pg_ctl).`,
    );
  }
  process.env.MOLO_PG_HOST = cluster.host;
  process.env.MOLO_PG_PORT = String(cluster.port);
  process.env.MOLO_PG_USER = user;
  process.stderr.write(`molo tests: no Postgres on ${host}:${port} (${probe}); started a throwaway one on ${cluster.host}:${cluster.port}\n`);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}

/** True when psql can run a query there; otherwise why not. */
function answers(probeHost: string, probePort: number, probeUser: string): Promise<true | string> {
  return new Promise((resolve) => {
    execFile(
      'psql',
      ['-X', '-w', '-h', probeHost, '-p', String(probePort), '-U', probeUser, '-d', 'postgres', '-Atqc', 'SELECT 1'],
      { env: { ...process.env, PGCONNECT_TIMEOUT: String(PROBE_TIMEOUT_S) }, timeout: (PROBE_TIMEOUT_S + 1) * 1_000 },
      (error, _stdout, stderr) => {
        if (error === null) resolve(true);
        else if ((error as NodeJS.ErrnoException).code === 'ENOENT') resolve('psql is not installed');
        else resolve(firstLine(stderr || error.message));
      },
    );
  });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

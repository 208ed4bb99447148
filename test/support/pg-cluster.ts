/**
 * A throwaway Postgres 15 cluster for tests that the machine's trust-auth server cannot serve:
 * password authentication (SCRAM, MD5, cleartext), TLS, restarts and crashes.
 *
 * Costs about a second to start: start one per test file (beforeAll / afterAll), not per test.
 *
 *   let cluster: Cluster;
 *   beforeAll(async () => { cluster = await startCluster({ tls: true }); }, 60_000);
 *   afterAll(() => cluster?.stop());
 *
 * Everything lives in one temp directory (data, Unix socket, log, certificate) owned by the
 * `postgres` OS user when we run as root (initdb and pg_ctl refuse root). Nothing is left behind:
 * `stop()` removes it; an exit hook kills and removes what a crashed test file did not stop; and
 * each start first sweeps directories whose owning test process is gone.
 */
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { freePort } from './ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ClusterOptions {
  /** ssl=on with a fresh self-signed certificate (CN=localhost, SAN localhost and 127.0.0.1). */
  readonly tls?: boolean;
  /** Only TLS connections over TCP (`hostssl` lines, `hostnossl ... reject`). Implies `tls`. */
  readonly requireTls?: boolean;
  /** How long start (and restart) may take before failing with the server log's tail. Default 30 s. */
  readonly startTimeoutMs?: number;
  /** Extra postgresql.conf settings, e.g. `{ max_connections: 20 }`. Values are written verbatim. */
  readonly settings?: Readonly<Record<string, string | number>>;
  /**
   * A superuser role of this name that logs in without a password (`trust` over TCP and the
   * socket), as the machine's test server has it: what the test run's fallback server uses.
   */
  readonly trustSuperuser?: string;
}

export interface ClusterUser {
  readonly name: string;
  readonly password: string;
}

export interface PsqlOptions {
  readonly user?: string;
  /** Defaults to the superuser's password when `user` is the superuser or omitted. */
  readonly password?: string;
  readonly database?: string;
  /** Connect over TCP to 127.0.0.1 instead of the Unix socket. */
  readonly tcp?: boolean;
  /** psql's `sslmode` (TCP only), e.g. 'require'. */
  readonly sslmode?: string;
  readonly timeoutMs?: number;
}

export interface Cluster {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Directory holding the Unix socket (`.s.PGSQL.<port>`). */
  readonly socketDir: string;
  /** The temp directory holding everything; gone after `stop()`. */
  readonly dir: string;
  readonly database: 'postgres';
  readonly users: {
    /** Superuser, SCRAM-SHA-256 stored password, `scram-sha-256` pg_hba line. */
    readonly superuser: ClusterUser;
    /** MD5-stored password and an `md5` pg_hba line. */
    readonly md5: ClusterUser;
    /** `password` (cleartext) pg_hba line. */
    readonly cleartext: ClusterUser;
  };
  /** PEM of the self-signed server certificate (its own CA) when started with `tls`. */
  readonly caCert?: string;
  /** Runs SQL through psql (as the superuser over the socket unless told otherwise); returns unaligned output. */
  psql(sql: string, options?: PsqlOptions): Promise<string>;
  /** Stops (mode `fast`: connections are terminated) and starts again on the same port. */
  restart(options?: { mode?: 'smart' | 'fast' | 'immediate' }): Promise<void>;
  /** SIGKILLs the postmaster, as a crash would; `start()` brings it back. */
  kill(): Promise<void>;
  /** Starts a stopped or killed cluster again on the same port. */
  start(): Promise<void>;
  /** Stops (immediate) and removes the directory. Idempotent; never throws. */
  stop(): Promise<void>;
  /** The postmaster's pid while running. */
  postmasterPid(): number | undefined;
  /** The server log (for diagnosing a failed test). */
  log(): string;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const COMMAND_TIMEOUT_MS = 60_000;
const OUTPUT_CAP = 1 << 20;
const DIR_PREFIX = 'molo-pgc-';

const isRoot = process.getuid?.() === 0;
/** PATH with Debian's versioned server directories appended, newest first, for when initdb/pg_ctl are not linked onto PATH. */
const PATH = (() => {
  const base = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    return [base, ...versions.map((v) => `/usr/lib/postgresql/${v}/bin`)].join(':');
  } catch {
    return base;
  }
})();
/** Clusters this process started and has not stopped: the exit hook's work list. */
const live = new Set<{ dir: string; dataDir: string }>();
let exitHookInstalled = false;

interface RunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
  readonly timeoutMs?: number;
  /** Run as the `postgres` OS user when we are root. */
  readonly asPostgres?: boolean;
}

/** Runs a command to completion; rejects with its stderr (never its input, which may hold passwords). */
function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  const [file, argv] = options.asPostgres && isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env: { ...process.env, PATH, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < OUTPUT_CAP) stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < OUTPUT_CAP) stderr += chunk.toString('utf8');
    });
    const timeoutMs = options.timeoutMs ?? COMMAND_TIMEOUT_MS;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${signal === 'SIGKILL' ? `timed out after ${timeoutMs} ms` : `exited with ${code ?? signal}`}: ${stderr.trim() || stdout.trim()}`));
    });
    child.stdin.on('error', () => {}); // the command may exit before reading its input
    child.stdin.end(options.input ?? '');
  });
}


function postgresIds(): { uid: number; gid: number } | undefined {
  if (!isRoot) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** A private file postgres can read: 0600, owned by postgres when we are root. */
function writePrivate(path: string, content: string, ids: { uid: number; gid: number } | undefined): void {
  writeFileSync(path, content, { mode: 0o600 });
  if (ids !== undefined) chownSync(path, ids.uid, ids.gid);
}

function readPostmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` still runs. A zombie counts as gone: the daemonized postmaster's parent is init,
 * which in some containers reaps only after a second or more.
 */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self'); // no /proc: trust kill(0)
  }
}
const alive = processRunning;

/** True if `pid` is a postgres process serving `dataDir` (guards against a recycled pid). */
function isPostmasterOf(pid: number, dataDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir);
  } catch {
    return alive(pid); // no /proc: trust the pid file
  }
}

/** SIGKILL the postmaster of `dataDir` if it runs; synchronous so the exit hook can use it. */
function killPostmasterSync(dataDir: string): number | undefined {
  const pid = readPostmasterPid(dataDir);
  if (pid === undefined || !isPostmasterOf(pid, dataDir)) return undefined;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return undefined;
  }
  return pid;
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when afterAll never ran (the file crashed, the worker was torn down).
  process.on('exit', () => {
    for (const cluster of live) {
      killPostmasterSync(cluster.dataDir);
      rmSync(cluster.dir, { recursive: true, force: true });
    }
  });
}

/** Removes clusters left by test processes that are gone (killed before their exit hook ran). */
function sweepStale(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {
      continue; // being created right now, or not ours
    }
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    killPostmasterSync(join(dir, 'data'));
    rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const quoteLiteral = (value: string): string => `'${value.replace(/'/g, "''")}'`;
const quoteIdent = (value: string): string => `"${value.replace(/"/g, '""')}"`;

/** Starts a fresh cluster with SCRAM, MD5 and cleartext roles; rejects (having cleaned up) if it cannot. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  sweepStale();
  installExitHook();
  const tls = options.tls === true || options.requireTls === true;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const ids = postgresIds();
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'sock');
  const logFile = join(dir, 'postgres.log');
  const entry = { dir, dataDir };
  live.add(entry);
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  chmodSync(dir, 0o700);
  if (ids !== undefined) chownSync(dir, ids.uid, ids.gid);

  const secret = (): string => randomBytes(12).toString('base64url');
  const users = {
    superuser: { name: 'molo_super', password: `su-${secret()}` },
    md5: { name: 'molo_md5', password: `md5-${secret()}` },
    cleartext: { name: 'molo_cleartext', password: `clear-${secret()}` },
  };
  let port = 0;
  let stopped = false;

  const pgctl = (args: string[], timeoutMs = startTimeoutMs + 5_000): Promise<string> => run('pg_ctl', ['-D', dataDir, ...args], { asPostgres: true, timeoutMs });

  const psql = (sql: string, psqlOptions: PsqlOptions = {}): Promise<string> => {
    const user = psqlOptions.user ?? users.superuser.name;
    const password = psqlOptions.password ?? (user === users.superuser.name ? users.superuser.password : undefined);
    const host = psqlOptions.tcp === true ? '127.0.0.1' : socketDir;
    const env: NodeJS.ProcessEnv = { PGPASSWORD: password ?? '', PGCLIENTENCODING: 'UTF8', PGCONNECT_TIMEOUT: '10', PGSSLMODE: psqlOptions.sslmode ?? (psqlOptions.tcp === true ? 'disable' : 'prefer') };
    const args = ['-X', '-w', '-h', host, '-p', String(port), '-U', user, '-d', psqlOptions.database ?? 'postgres', '-v', 'ON_ERROR_STOP=1', '-Atq', '-f', '-'];
    return run('psql', args, { env, input: sql, timeoutMs: psqlOptions.timeoutMs ?? COMMAND_TIMEOUT_MS }).then((out) => out.trim());
  };

  const logTail = (): string => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '(no server log)';
    }
  };

  /** pg_ctl start, waiting for readiness; then confirms the TCP listener answers. */
  const startOnce = async (): Promise<void> => {
    await pgctl(['-l', logFile, '-w', '-t', String(Math.ceil(startTimeoutMs / 1000)), '-s', 'start']);
    await run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port), '-t', '10'], { timeoutMs: 15_000 });
  };

  /** Starts, retrying while a killed postmaster's backends still hold the old shared memory. */
  const start = async (): Promise<void> => {
    if (stopped) throw new Error('pg-cluster: start() after stop()');
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      try {
        await startOnce();
        return;
      } catch (error) {
        if (Date.now() >= deadline) {
          throw new Error(`pg-cluster: postgres did not become ready on 127.0.0.1:${port} within ${startTimeoutMs} ms: ${(error as Error).message}\n--- server log tail ---\n${logTail()}`);
        }
        await sleep(200);
      }
    }
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const pid = readPostmasterPid(dataDir);
    if (pid !== undefined && isPostmasterOf(pid, dataDir)) {
      try {
        await pgctl(['-m', 'immediate', '-w', '-t', '10', '-s', 'stop'], 15_000);
      } catch {
        // pg_ctl failed or hung: SIGKILL below.
      }
      // The postmaster removes its pid file (what pg_ctl waits for) just before it exits.
      const deadline = Date.now() + 2_000;
      while (alive(pid) && Date.now() < deadline) await sleep(10);
      if (alive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
        const killDeadline = Date.now() + 5_000;
        while (alive(pid) && Date.now() < killDeadline) await sleep(10);
      }
    }
    rmSync(dir, { recursive: true, force: true });
    live.delete(entry);
  };

  try {
    writePrivate(join(dir, 'pwfile'), `${users.superuser.password}\n`, ids);
    await run(
      'initdb',
      ['-D', dataDir, '-U', users.superuser.name, `--pwfile=${join(dir, 'pwfile')}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { asPostgres: true },
    );
    rmSync(join(dir, 'pwfile'));
    await run('mkdir', ['-p', '-m', '0700', socketDir], { asPostgres: true });

    let caCert: string | undefined;
    if (tls) {
      await run(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dataDir, 'server.key'), '-out', join(dataDir, 'server.crt')],
        { asPostgres: true },
      );
      chmodSync(join(dataDir, 'server.key'), 0o600);
      caCert = readFileSync(join(dataDir, 'server.crt'), 'utf8');
    }

    const settings: Record<string, string | number> = {
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: quoteLiteral(socketDir),
      // A test cluster's data is disposable: skip durability for speed.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      shared_buffers: "'32MB'",
      max_connections: 50,
      password_encryption: "'scram-sha-256'",
      ...(tls ? { ssl: 'on' } : {}),
      ...options.settings,
    };
    appendFileSync(join(dataDir, 'postgresql.conf'), `\n# pg-cluster\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);

    const tcp = options.requireTls === true ? 'hostssl' : 'host';
    const trusted = options.trustSuperuser;
    const hba = [
      ...(trusted !== undefined ? [`local all ${quoteIdent(trusted)} trust`, `${tcp} all ${quoteIdent(trusted)} 127.0.0.1/32 trust`] : []),
      'local all all scram-sha-256',
      `${tcp} all ${users.md5.name} 127.0.0.1/32 md5`,
      `${tcp} all ${users.cleartext.name} 127.0.0.1/32 password`,
      `${tcp} all all 127.0.0.1/32 scram-sha-256`,
      ...(options.requireTls === true ? ['hostnossl all all 127.0.0.1/32 reject'] : []),
    ];
    writeFileSync(join(dataDir, 'pg_hba.conf'), `${hba.join('\n')}\n`);

    // The port may be taken between our probe and postgres binding it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      appendFileSync(join(dataDir, 'postgresql.conf'), `port = ${port}\n`);
      try {
        await startOnce();
        break;
      } catch (error) {
        if (attempt >= 3) throw new Error(`pg-cluster: postgres did not start: ${(error as Error).message}\n--- server log tail ---\n${logTail()}`);
        killPostmasterSync(dataDir);
      }
    }

    await psql(
      [
        "SET password_encryption = 'md5';",
        `CREATE ROLE ${quoteIdent(users.md5.name)} LOGIN PASSWORD ${quoteLiteral(users.md5.password)};`,
        "SET password_encryption = 'scram-sha-256';",
        `CREATE ROLE ${quoteIdent(users.cleartext.name)} LOGIN PASSWORD ${quoteLiteral(users.cleartext.password)};`,
        ...(trusted !== undefined ? [`CREATE ROLE ${quoteIdent(trusted)} SUPERUSER LOGIN;`] : []),
      ].join('\n'),
    );

    return {
      host: '127.0.0.1',
      port,
      socketDir,
      dir,
      database: 'postgres',
      users,
      ...(caCert !== undefined ? { caCert } : {}),
      psql,
      start,
      stop,
      restart: async ({ mode = 'fast' } = {}) => {
        const pid = readPostmasterPid(dataDir);
        if (pid !== undefined && isPostmasterOf(pid, dataDir)) await pgctl(['-m', mode, '-w', '-t', String(Math.ceil(startTimeoutMs / 1000)), '-s', 'stop']);
        await start();
      },
      kill: async () => {
        const pid = killPostmasterSync(dataDir);
        if (pid === undefined) return;
        const deadline = Date.now() + 5_000;
        while (alive(pid) && Date.now() < deadline) await sleep(10);
      },
      postmasterPid: () => {
        const pid = readPostmasterPid(dataDir);
        return pid !== undefined && isPostmasterOf(pid, dataDir) ? pid : undefined;
      },
      log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Pool settings for tests that stop, kill and restart `cluster` under a live pool: the superuser,
 * quick reconnects and a short acquire timeout, so an outage shows within the test's time.
 */
export function restartablePoolConfig(cluster: Cluster) {
  return {
    host: cluster.host,
    port: cluster.port,
    user: cluster.users.superuser.name,
    password: cluster.users.superuser.password,
    database: 'postgres',
    min: 2,
    max: 4,
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    acquireTimeoutMs: 1_000,
  } as const;
}

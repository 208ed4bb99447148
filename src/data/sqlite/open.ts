/**
 * `openSqlite`: checks the file's filesystem, starts the writer and reader threads under their
 * supervisor, and wires the main thread's side (channels, gate, checkpoint scheduler) around them.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, type ActorRuntime } from '../../actors/index.js';
import { silentLogger, type Logger } from '../../telemetry/index.js';
import type { DataContext } from '../context.js';
import { ConnectFailed, DbError, InvalidDataConfig, SqliteDirectoryMissing, type RedactedConnection } from '../errors.js';
import { dataMetrics } from '../metrics.js';
import { WorkerChannel } from './channel.js';
import { CheckpointScheduler } from './checkpoint.js';
import { resolveSqliteConfig, type ResolvedSqliteConfig, type SqliteConfig } from './config.js';
import { SqliteDatabase, type ReaderSlot } from './database.js';
import { Engine } from './engine.js';
import { FaultMapper } from './faults.js';
import { checkSqliteDriver } from './driver.js';
import { WriterGate } from './gate.js';
import { refuseNetworkFilesystem } from './mounts.js';
import type { WorkerOptions } from './protocol.js';
import { superviseWorkers, type WorkerSlot } from './supervision.js';
import { SqliteTelemetry } from './telemetry.js';

/** Names of the databases open on each system: two with one name would share thread hosts. */
const openNames = new WeakMap<ActorRuntime, Set<string>>();

/** Room left in each frame for msgpack framing beyond what the size estimates count. */
const FRAME_HEADROOM_BYTES = 16 * 1024;

/**
 * Opens (creating if missing) the SQLite file `config.file` with one writer thread and
 * `config.readers` reader threads. Rejects with SqliteDriverMissing (better-sqlite3 is not installed), InvalidDataConfig (a bad option), NetworkFilesystem
 * (the file's directory is a network mount), SqliteDirectoryMissing (no such directory, and no `createDirectory`) or ConnectFailed (the file cannot be opened or put in
 * WAL mode).
 */
export async function openSqlite(system: ActorRuntime, config: SqliteConfig, ctx?: DataContext): Promise<SqliteDatabase> {
  const resolved = resolveSqliteConfig(config);
  const names = openNames.get(system) ?? new Set<string>();
  openNames.set(system, names);
  if (names.has(resolved.name)) throw new InvalidDataConfig('sqlite.name', `a database named ${resolved.name} is already open on this system`);
  names.add(resolved.name);
  try {
    return await open(system, config, resolved, ctx, () => names.delete(resolved.name));
  } catch (error) {
    names.delete(resolved.name);
    throw error;
  }
}

/**
 * SQLite creates a missing file but not its directory, which would fail with a bare, retryable
 * ENOENT. A missing directory is refused by name (SqliteDirectoryMissing, not retryable) unless
 * `createDirectory` asks for it to be made: a wrong path or an unmounted volume must not quietly
 * become a fresh empty database. When making it is impossible (a permission, a file in the way)
 * the error says so and is not retryable either.
 */
async function ensureDirectory(file: string, create: boolean, connection: RedactedConnection): Promise<void> {
  const directory = dirname(file);
  if (!create) {
    const found = await stat(directory).catch((error: NodeJS.ErrnoException) => error);
    if (!(found instanceof Error)) return;
    if (found.code === 'ENOENT') throw new SqliteDirectoryMissing(file, directory, { connection, cause: found });
    // ENOTDIR (a file in the way), EACCES: no retry fixes these either.
    throw new ConnectFailed(`${file}: its directory ${directory} cannot be used (${found.code ?? 'error'}): ${found.message}`, { connection, cause: found }, false);
  }
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new ConnectFailed(`${file}: cannot create its directory ${directory} (${code}): ${(error as Error).message}`, { connection, cause: error }, false);
  }
}

async function open(system: ActorRuntime, config: SqliteConfig, resolved: ResolvedSqliteConfig, ctx: DataContext | undefined, release: () => void): Promise<SqliteDatabase> {
  const file = resolve(resolved.file);
  const connection: RedactedConnection = { backend: 'sqlite', host: file };
  checkSqliteDriver(connection);
  await ensureDirectory(file, resolved.createDirectory, connection);
  try {
    await refuseNetworkFilesystem(file);
  } catch (error) {
    if (error instanceof DbError) throw error;
    throw new ConnectFailed(`${file}: ${(error as Error).message}`, { connection, cause: error });
  }
  const payloadLimit = (system as { payloadLimitBytes?: number }).payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES;
  const budgetBytes = Math.max(4_096, payloadLimit - Math.min(FRAME_HEADROOM_BYTES, Math.floor(payloadLimit / 4)));
  const logger: Logger = config.logger ?? (system as { logger?: Logger }).logger ?? silentLogger;
  const telemetry = new SqliteTelemetry(resolved.name, file, dataMetrics(config.metrics), logger);
  const engine = new Engine(new FaultMapper(connection, telemetry, budgetBytes), resolved.captureCallerStacks);

  const workerOptions = (role: WorkerOptions['role'], direct: string): WorkerOptions => ({
    direct,
    path: file,
    role,
    busyTimeoutMs: resolved.busyTimeoutMs,
    busyRetries: resolved.busyRetries,
    journalSizeLimitBytes: resolved.journalSizeLimitBytes,
    walAutocheckpointPages: resolved.walAutocheckpointPages,
    statementCacheSize: resolved.statementCacheSize,
    maxReadMs: resolved.maxReadMs,
    synchronous: resolved.synchronous,
    replyBudgetBytes: budgetBytes,
  });
  const slot = (id: string, role: WorkerOptions['role']): WorkerSlot => {
    // One direct link per worker slot, named uniquely in this process (direct-link.ts).
    const direct = `molo.sqlite.${randomUUID()}`;
    return {
      id,
      host: `${resolved.name}.${id}`,
      channel: new WorkerChannel(system, `sqlite ${resolved.name} ${id}`, resolved.maxQueuedRequests, budgetBytes, direct),
      options: workerOptions(role, direct),
    };
  };
  const writerSlot = slot('writer', 'writer');
  const readerSlots = Array.from({ length: resolved.readers }, (_, i) => slot(`reader.${i}`, 'reader'));
  const readers: ReaderSlot[] = readerSlots.map((reader) => ({ channel: reader.channel, pinned: false }));

  let database: SqliteDatabase | undefined;
  let supervision;
  try {
    supervision = await superviseWorkers(system, [writerSlot, ...readerSlots], resolved.maxRestarts, telemetry, (reason) => database?.failed(reason));
  } catch (error) {
    throw new ConnectFailed(`${file}: ${innermostMessage(error)}`, { connection, cause: error });
  }
  const gate = new WriterGate(resolved.maxWaiters, resolved.acquireTimeoutMs, {
    exhausted: () => telemetry.exhausted(),
    timedOut: () => telemetry.acquireTimedOut(),
  });
  const checkpoints = new CheckpointScheduler(engine, writerSlot.channel, gate, { readersIdle: () => readers.every((reader) => !reader.pinned && reader.channel.pending === 0) }, telemetry);
  database = new SqliteDatabase({
    system,
    config: resolved,
    file,
    engine,
    writer: writerSlot.channel,
    readers,
    gate,
    checkpoints,
    telemetry,
    supervision,
    hosts: { writer: writerSlot.host, readers: readerSlots.map((reader) => reader.host) },
    release,
  });
  checkpoints.start(resolved.checkpointIntervalMs);
  logger.debug({ event: 'sqlite.opened', db: resolved.name, file, readers: resolved.readers, correlationId: ctx?.correlationId }, 'sqlite.opened');
  return database;
}

/** The message at the bottom of a start failure (StartFailed → failedToStartChild → init's error). */
function innermostMessage(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 8; depth++) {
    if (current instanceof Error && !(current as { reason?: unknown }).reason) return current.message;
    const next = (current as { reason?: unknown } | null)?.reason;
    if (next === undefined) break;
    const shutdown = (next as { shutdown?: { reason?: unknown } } | null)?.shutdown;
    current = shutdown?.reason ?? next;
  }
  return current instanceof Error ? current.message : JSON.stringify(current);
}

/**
 * `openSqlite`: checks the file's filesystem, starts the writer and reader threads under their
 * supervisor, and wires the main thread's side (channels, gate, checkpoint scheduler) around them.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, type ActorRuntime, type Ref } from '../../actors/index.js';
import type { ChildSpec } from '../../behaviours/index.js';
import { silentLogger, type Logger } from '../../telemetry/index.js';
import type { DataContext } from '../context.js';
import { ConnectFailed, DbError, InvalidDataConfig, SqliteDirectoryMissing, type RedactedConnection } from '../errors.js';
import { dataMetrics } from '../metrics.js';
import { refuseUnknownKeys } from '../option-keys.js';
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
import { superviseWorkers, type Supervision, type WorkerSlot } from './supervision.js';
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
  return (await openPlaced(system, config, ctx, undefined)).database;
}

/**
 * A SQLite database as a child of the application's tree: the child is its threads' supervisor,
 * shown in `/tree`, stopped in order with its siblings and started again by the tree's rules when
 * it gives up (the same file, slots and channels: the handle serves on through the new threads).
 * `database` resolves once the child has first started; a file that cannot be opened fails the
 * child's start with the reason `openSqlite` would reject with.
 */
export function sqliteChild(system: ActorRuntime, config: SqliteConfig, options: { readonly id?: string } = {}): ChildSpec & { readonly database: Promise<SqliteDatabase> } {
  refuseUnknownKeys('sqliteChild', options, ['id']);
  let opened: Placed | undefined;
  let settle!: { resolve(db: SqliteDatabase): void; reject(error: unknown): void };
  const database = new Promise<SqliteDatabase>((resolve, reject) => (settle = { resolve, reject }));
  // A caller that never awaits it must not see an unhandled rejection: the tree's start reports the failure.
  database.catch(() => undefined);
  const spec: ChildSpec = {
    id: options.id ?? 'sqlite',
    type: 'supervisor',
    start: async ({ parent }) => {
      if (opened !== undefined) return opened.restart(parent);
      try {
        opened = await openPlaced(system, config, undefined, parent);
      } catch (error) {
        settle.reject(error);
        throw error;
      }
      settle.resolve(opened.database);
      return opened.database.supervisor;
    },
  };
  // Not enumerable: it rides along for the caller, it is not a child-spec key (those are checked).
  return Object.defineProperty(spec, 'database', { value: database, enumerable: false }) as ChildSpec & { readonly database: Promise<SqliteDatabase> };
}

interface Placed {
  readonly database: SqliteDatabase;
  /** Starts the threads' supervisor again under `link`; resolves with it. */
  restart(link: Ref): Promise<Ref>;
}

async function openPlaced(system: ActorRuntime, config: SqliteConfig, ctx: DataContext | undefined, link: Ref | undefined): Promise<Placed> {
  const resolved = resolveSqliteConfig(config);
  const names = openNames.get(system) ?? new Set<string>();
  openNames.set(system, names);
  if (names.has(resolved.name)) throw new InvalidDataConfig('sqlite.name', `a database named ${resolved.name} is already open on this system`);
  names.add(resolved.name);
  try {
    return await open(system, config, resolved, ctx, () => names.delete(resolved.name), link);
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

async function open(system: ActorRuntime, config: SqliteConfig, resolved: ResolvedSqliteConfig, ctx: DataContext | undefined, release: () => void, link: Ref | undefined): Promise<Placed> {
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
  let supervision: Supervision;
  const slots = [writerSlot, ...readerSlots];
  const supervisorName = `molo.sqlite.${resolved.name}`;
  // On its own, a supervisor that gave up fails the handle; in an application's tree, the tree decides (it restarts or gives up itself).
  const onGiveUp = (reason: unknown): void => {
    if (link === undefined) database?.failed(reason);
  };
  const gate = new WriterGate(resolved.maxWaiters, resolved.acquireTimeoutMs, {
    exhausted: () => telemetry.exhausted(),
    timedOut: () => telemetry.acquireTimedOut(),
  });
  const checkpoints = new CheckpointScheduler(engine, writerSlot.channel, gate, { readersIdle: () => readers.every((reader) => !reader.pinned && reader.channel.pending === 0) }, telemetry);
  const checkpointChild = checkpoints.childSpec('checkpoint', resolved.checkpointIntervalMs);
  const extraChildren = checkpointChild === undefined ? [] : [checkpointChild];
  try {
    supervision = await superviseWorkers(system, slots, resolved.maxRestarts, telemetry, onGiveUp, { name: supervisorName, link, extraChildren });
  } catch (error) {
    throw new ConnectFailed(`${file}: ${innermostMessage(error)}`, { connection, cause: error });
  }
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
  logger.debug({ event: 'sqlite.opened', db: resolved.name, file, readers: resolved.readers, correlationId: ctx?.correlationId }, 'sqlite.opened');
  return {
    database,
    restart: async (parent) => {
      const again = await superviseWorkers(system, slots, resolved.maxRestarts, telemetry, onGiveUp, { name: supervisorName, link: parent, state: supervision, extraChildren });
      supervision.supervisor = again.supervisor;
      return again.supervisor;
    },
  };
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

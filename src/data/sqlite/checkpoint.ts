/**
 * Keeps the WAL bounded. SQLite's auto-checkpoint (PASSIVE, every wal_autocheckpoint pages) copies
 * frames back but never shrinks the file, and it cannot finish past a reader that still needs old
 * frames. So on an interval, when no read is open on any reader and no transaction holds the
 * writer, the writer runs `wal_checkpoint(TRUNCATE)`, which resets the WAL file to zero bytes.
 * The read cap (maxReadMs) guarantees such a moment comes. Results are counted: ok, busy (a reader
 * got in the way; tried again next interval), failed.
 */
import { isFault, Op, type CheckpointMode, type CheckpointReply } from './protocol.js';
import type { WorkerChannel } from './channel.js';
import type { Engine } from './engine.js';
import type { WriterGate } from './gate.js';
import type { SqliteTelemetry } from './telemetry.js';
import { DbError } from '../errors.js';

/** How long the checkpoint itself waits for readers to move off old frames. */
const CHECKPOINT_BUSY_TIMEOUT_MS = 100;
const CHECKPOINT_DEADLINE_MS = 30_000;

export interface ReadState {
  /** True when no reader has a statement in flight or a read pinned. */
  readersIdle(): boolean;
}

export class CheckpointScheduler {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running = false;

  constructor(
    readonly engine: Engine,
    readonly writer: WorkerChannel,
    readonly gate: WriterGate,
    readonly reads: ReadState,
    readonly telemetry: SqliteTelemetry,
  ) {}

  start(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.#timer = setInterval(() => void this.#tick(), intervalMs);
    // The scheduler never keeps the process alive on its own.
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    if (this.#running || this.engine.closed || !this.writer.attached || !this.reads.readersIdle()) return;
    const release = this.gate.tryAcquire();
    if (release === undefined) return;
    this.#running = true;
    try {
      await this.run('TRUNCATE');
    } catch {
      // Counted and logged by run().
    } finally {
      this.#running = false;
      release();
    }
  }

  /** One checkpoint on the writer (the caller holds the gate, or accepts running between statements). */
  async run(mode: CheckpointMode): Promise<CheckpointReply> {
    let reply;
    try {
      reply = await this.engine.op(this.writer, Op.Checkpoint, [mode, CHECKPOINT_BUSY_TIMEOUT_MS], Date.now() + CHECKPOINT_DEADLINE_MS, 0);
    } catch (error) {
      this.telemetry.checkpoint('failed', { mode, error: String((error as { detail?: string }).detail ?? error) });
      throw new DbError(`checkpoint failed: ${String((error as { detail?: string }).detail ?? error)}`, { cause: error });
    }
    if (isFault(reply)) {
      this.telemetry.checkpoint('failed', { mode, error: reply.e, sqliteCode: reply.k });
      throw new DbError(`checkpoint failed: ${reply.e}`, { sqliteCode: reply.k });
    }
    const result = reply as CheckpointReply;
    this.telemetry.checkpoint(result.busy === 0 ? 'ok' : 'busy', { mode, log: result.log, checkpointed: result.checkpointed });
    return result;
  }
}

/**
 * Keeps the WAL bounded. SQLite's auto-checkpoint (PASSIVE, every wal_autocheckpoint pages) copies
 * frames back but never shrinks the file, and it cannot finish past a reader that still needs old
 * frames. So on an interval, when no read is open on any reader and no transaction holds the
 * writer, the writer runs `wal_checkpoint(TRUNCATE)`, which resets the WAL file to zero bytes.
 * The read cap (maxReadMs) guarantees such a moment comes. Results are counted: ok, busy (a reader
 * got in the way; tried again next interval), failed.
 *
 * The interval is kept by an actor, a child of the database's own supervisor (after the threads),
 * ticking on the system's clock: it shows in `/tree` under the database, is restarted by the
 * supervisor if it dies, and is stopped first at close.
 */
import type { ActorContext } from '../../actors/index.js';
import type { ChildSpec } from '../../behaviours/index.js';
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

const TICK = Symbol('checkpoint.tick');

export class CheckpointScheduler {
  #running = false;

  constructor(
    readonly engine: Engine,
    readonly writer: WorkerChannel,
    readonly gate: WriterGate,
    readonly reads: ReadState,
    readonly telemetry: SqliteTelemetry,
  ) {}

  /** The actor that ticks every `intervalMs` (none when the interval is 0: checkpoints only on demand). */
  childSpec(id: string, intervalMs: number): ChildSpec | undefined {
    if (intervalMs <= 0) return undefined;
    return {
      id,
      restart: 'permanent',
      start: ({ system, parent }) =>
        system.spawn(
          {
            name: 'sqlite.checkpoint',
            init: (ctx: ActorContext) => void ctx.sendAfter(intervalMs, TICK),
            // The next tick is armed once this one finished, so a slow checkpoint never overlaps the next.
            handle: async (ctx: ActorContext, message: unknown) => {
              if (message !== TICK) return;
              await this.#tick();
              ctx.sendAfter(intervalMs, TICK);
            },
          },
          { link: parent },
        ),
    };
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

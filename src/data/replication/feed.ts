/**
 * The change feed as write events: tails one or more instances' oplogs (readers on a shared
 * Postgres, or this node's own) and emits one `WriteEvent` per entry, in each origin's order, to
 * subscribers such as `cache.invalidateOn(feed)`. So a write on any instance invalidates the
 * affected cache entries (by key and tag) on every instance that follows the feed, not only where it
 * was written (local memory is never treated as global).
 *
 * The cursor of each origin lives in the feed: after a lost connection or a pause the loop resumes
 * from it and catches up rather than skipping. A cursor that fell behind retention cannot: the feed
 * calls its `onFlush` listeners (a cache clears itself), says so in `flushes`, and continues from the
 * origin's current high water.
 */
import type { WriteEvent, WriteEventSource } from '../cache/invalidation.js';
import type { OplogEntry } from './contract.js';
import { OplogBehindRetention } from './errors.js';
import type { Oplog } from './oplog.js';

function writeEventOf(entry: OplogEntry): WriteEvent {
  return { table: entry.model, primaryKey: entry.key, op: entry.op === 'delete' ? 'delete' : 'update', version: entry.version };
}

/**
 * Embedded instances (each its own database) as write events: what the sink applied from other
 * nodes, after commit, for `cache.invalidateOn(appliedChanges(sink), …)`. With the local ORM's own
 * write events, a cache then drops entries for writes made on any node. A node that was cut off
 * invalidates as its replicator catches up.
 */
export function appliedChanges(sink: { onApplied(listener: (entries: readonly OplogEntry[]) => void): () => void }): WriteEventSource<WriteEvent> {
  return {
    subscribe: (listener) =>
      sink.onApplied((entries) => {
        for (const entry of entries) listener(writeEventOf(entry));
      }),
  };
}

export interface ChangeFeedOptions {
  /** Start after these sequences, per origin instance (default: each origin's current high water). */
  readonly from?: Readonly<Record<string, number>>;
  /** Poll interval for commits made by other processes (default 200 ms, at least 10). */
  readonly pollMs?: number;
  /** Delay before retrying a failed read (default 1,000 ms). */
  readonly retryMs?: number;
}

export class ChangeFeed implements WriteEventSource<WriteEvent> {
  private readonly listeners = new Set<(event: WriteEvent) => void>();
  private readonly flushListeners = new Set<(origin: string) => void>();
  private readonly controller = new AbortController();
  private readonly loops: Promise<void>[] = [];
  readonly cursors = new Map<string, number>();
  flushes = 0;
  errors = 0;

  constructor(
    private readonly sources: readonly Oplog[],
    private readonly options: ChangeFeedOptions = {},
  ) {}

  /** Begins tailing every source; resolves once each has its starting cursor. */
  async start(): Promise<this> {
    for (const source of this.sources) {
      this.cursors.set(source.instance, this.options.from?.[source.instance] ?? (await source.highWater()));
      this.loops.push(this.loop(source));
    }
    return this;
  }

  subscribe(listener: (event: WriteEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called when an origin's entries were lost to retention: what depended on them must be dropped. */
  onFlush(listener: (origin: string) => void): () => void {
    this.flushListeners.add(listener);
    return () => this.flushListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled(this.loops);
  }

  private async loop(source: Oplog): Promise<void> {
    const signal = this.controller.signal;
    const pollMs = Math.max(10, this.options.pollMs ?? 200);
    while (!signal.aborted) {
      try {
        for await (const entry of source.tail(this.cursors.get(source.instance)!, { signal, pollMs })) {
          this.cursors.set(source.instance, entry.seq);
          const event = writeEventOf(entry);
          for (const l of this.listeners) {
            try {
              l(event);
            } catch {
              // One subscriber's failure must not stop the feed for the others.
            }
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof OplogBehindRetention) {
          this.flushes++;
          for (const l of this.flushListeners) l(source.instance);
          this.cursors.set(source.instance, await source.highWater().catch(() => error.oldestSeq - 1));
          continue;
        }
        // The database is away (a lost connection, a restart): wait, then resume from the cursor.
        this.errors++;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs ?? 1_000));
      }
    }
  }
}

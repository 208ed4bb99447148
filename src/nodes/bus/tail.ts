/**
 * A subscription that tails a topic by reading from its own position: the buses whose live signal is
 * a wake-up only (a NOTIFY, a peer's `wake`) share it. A wake-up during a read reads once more after
 * it, so none is lost; a failed read is retried by the next wake-up or poll from the same position,
 * so nothing is skipped; the position only moves past what was handed out (or reported as a gap).
 */
import type { Logger } from '../../telemetry/index.js';
import type { BusItem, BusRead, BusSubscription } from './bus.js';

/** What a tail reads through and reports to. */
export interface TailSource {
  readonly logger: Logger | undefined;
  read(topic: string, fromSeq: number, limit: number): Promise<BusRead>;
  /** The tail unsubscribed. */
  forget(tail: Tail): void;
}

export const TAIL_READ_LIMIT = 1_000;

export class Tail implements BusSubscription {
  #pumping = false;
  #again = false;
  closed = false;

  constructor(
    readonly source: TailSource,
    readonly topic: string,
    public nextSeq: number,
    readonly handler: (item: BusItem) => void,
  ) {}

  unsubscribe(): void {
    if (this.closed) return;
    this.closed = true;
    this.source.forget(this);
  }

  /** Reads from the position until caught up; a wake-up during a read reads once more after it. */
  async pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      for (;;) {
        this.#again = false;
        const read = await this.source.read(this.topic, this.nextSeq, TAIL_READ_LIMIT);
        if (this.closed) return;
        if (read.gap !== undefined) {
          this.nextSeq = read.gap.to + 1;
          this.#deliver({ kind: 'gap', ...read.gap });
        }
        for (const message of read.messages) {
          if (message.seq < this.nextSeq) continue;
          this.nextSeq = message.seq + 1;
          this.#deliver({ kind: 'message', ...message });
        }
        if (read.messages.length < TAIL_READ_LIMIT && !this.#again) return;
      }
    } catch (error) {
      // The next wake-up or poll reads again from the same position: nothing is skipped.
      if (!this.closed) this.source.logger?.warn({ event: 'bus.read_failed', topic: this.topic, err: error }, 'bus subscription read failed');
    } finally {
      this.#pumping = false;
    }
  }

  #deliver(item: BusItem): void {
    if (this.closed) return;
    try {
      this.handler(item);
    } catch (error) {
      this.source.logger?.error({ event: 'bus.handler_failed', topic: this.topic, err: error }, 'a bus subscriber threw');
    }
  }
}

/** A bus's live tails by topic: the count, the wake-ups, the poll and retention timers and the close that every bus does alike. */
export class TailsByTopic extends Map<string, Set<Tail>> {
  #count = 0;
  #timers: ReturnType<typeof setInterval>[] = [];

  /** Live tails over every topic (what a bus's subscription cap counts). */
  get count(): number {
    return this.#count;
  }

  /**
   * Wakes every tail each `pollIntervalMs` (so a lost wake-up costs at most that) and runs `retain`
   * each `retentionIntervalMs` (0 or no `retain`: never). Neither keeps the process alive; `closeAll` stops both.
   */
  startTimers(pollIntervalMs: number, retentionIntervalMs: number, retain: (() => Promise<unknown>) | undefined, logger: Logger | undefined): void {
    this.#timers.push(setInterval(() => this.wakeAll(), pollIntervalMs));
    if (retentionIntervalMs > 0 && retain !== undefined) {
      this.#timers.push(setInterval(() => void retain().catch((error: unknown) => logger?.warn({ event: 'bus.retention_failed', err: error }, 'bus retention pass failed')), retentionIntervalMs));
    }
    for (const timer of this.#timers) timer.unref();
  }

  /** Adds `tail` under its topic; true when it is the topic's first. */
  addTail(tail: Tail): boolean {
    this.#count++;
    const set = this.get(tail.topic);
    if (set !== undefined) {
      set.add(tail);
      return false;
    }
    this.set(tail.topic, new Set([tail]));
    return true;
  }

  /** Removes `tail`; `removed` is false when it was not here, `last` true when its topic has none left. */
  removeTail(tail: Tail): { readonly removed: boolean; readonly last: boolean } {
    const set = this.get(tail.topic);
    const removed = set?.delete(tail) === true;
    if (removed) this.#count--;
    const last = set?.size === 0;
    if (last) this.delete(tail.topic);
    return { removed, last };
  }

  wake(topic: string): void {
    const set = this.get(topic);
    if (set !== undefined) for (const tail of set) void tail.pump();
  }

  wakeAll(): void {
    for (const set of this.values()) for (const tail of set) void tail.pump();
  }

  closeAll(): void {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    this.#count = 0;
    for (const set of this.values()) for (const tail of set) tail.closed = true;
    this.clear();
  }
}

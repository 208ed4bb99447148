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

/**
 * One client socket (WebSocket or SSE) as the rooms see it: its rooms with the last sequence each
 * was sent, rate buckets, and a bounded send queue. Frames go straight to the transport while few
 * writes are in flight; past that they queue (a never-reading client stops write callbacks, so
 * its frames stay here, bounded), and the named policy decides at the cap: `drop-oldest` drops and
 * later reports the dropped range to the client as a `gap` (never silent), `close` closes with 4008.
 */
import type { SendQueuePolicy } from './options.js';

/** Writes handed to the transport whose callback has not come back, before frames queue. */
const IN_FLIGHT = 32;

export interface Transport {
  readonly kind: 'ws' | 'sse';
  write(text: string, done: () => void): void;
  close(code: number, reason: string): void;
}

export interface Membership {
  /** The last sequence this socket was sent (or skipped past) in the room. */
  last: number;
  /** Live items that arrived while its catch-up read ran. */
  catching: { seq: number; text: string | undefined }[] | undefined;
}

export interface ConnectionCounters {
  sent: number;
  dropped: number;
  closedSlow: number;
}

interface Queued {
  readonly text: string;
  readonly room: string | undefined;
  readonly seq: number;
}

export class TokenBucket {
  #tokens: number;
  #at = Date.now();
  constructor(readonly perSecond: number) {
    this.#tokens = perSecond;
  }
  take(): boolean {
    const now = Date.now();
    this.#tokens = Math.min(this.perSecond, this.#tokens + ((now - this.#at) * this.perSecond) / 1_000);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}

export class Connection {
  readonly rooms = new Map<string, Membership>();
  readonly joins: TokenBucket;
  readonly frames: TokenBucket;
  readonly #queue: Queued[] = [];
  #head = 0;
  #inFlight = 0;
  readonly #dropped = new Map<string, { from: number; to: number }>();
  closed = false;

  constructor(
    readonly id: string,
    readonly user: unknown,
    readonly transport: Transport,
    readonly limits: { readonly sendQueueMax: number; readonly policy: SendQueuePolicy; readonly joinRatePerSecond: number; readonly messageRatePerSecond: number },
    readonly counters: ConnectionCounters,
  ) {
    this.joins = new TokenBucket(limits.joinRatePerSecond);
    this.frames = new TokenBucket(limits.messageRatePerSecond);
  }

  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues (or writes) a frame; `room`/`seq` let a dropped frame be reported as a gap. */
  send(frame: object, room?: string, seq = 0): void {
    if (this.closed) return;
    this.#push({ text: JSON.stringify(frame), room, seq });
  }

  #push(item: Queued): void {
    if (this.#inFlight < IN_FLIGHT && this.queued === 0 && this.#dropped.size === 0) return this.#write(item.text);
    if (this.queued >= this.limits.sendQueueMax) {
      if (this.limits.policy === 'close') {
        this.counters.closedSlow++;
        this.close(4008, 'rooms.sendQueueMax');
        return;
      }
      const oldest = this.#queue[this.#head++]!;
      this.counters.dropped++;
      if (oldest.room !== undefined) {
        const range = this.#dropped.get(oldest.room);
        if (range === undefined) this.#dropped.set(oldest.room, { from: oldest.seq, to: oldest.seq });
        else range.to = oldest.seq;
      }
    }
    this.#queue.push(item);
    if (this.#head > 1_024 && this.#head * 2 > this.#queue.length) this.#queue.splice(0, this.#head), (this.#head = 0);
  }

  #write(text: string): void {
    this.#inFlight++;
    this.counters.sent++;
    this.transport.write(text, () => {
      this.#inFlight--;
      this.#flush();
    });
  }

  #flush(): void {
    while (!this.closed && this.#inFlight < IN_FLIGHT) {
      if (this.#dropped.size > 0) {
        // The dropped range goes out before the frames after it, so the client knows where it is.
        const [room, range] = this.#dropped.entries().next().value as [string, { from: number; to: number }];
        this.#dropped.delete(room);
        this.#write(JSON.stringify({ t: 'gap', room, from: range.from, to: range.to, reason: 'dropped' }));
        continue;
      }
      if (this.queued === 0) return;
      this.#write(this.#queue[this.#head++]!.text);
    }
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.close(code, reason);
  }
}

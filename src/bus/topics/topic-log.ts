/**
 * The queue of one channel (or of one pattern), shared by all its subscriptions: a ring of recent
 * messages, written once per publish, that each subscription reads at its own cursor. Fan-out so
 * costs one append per publish, whatever the number of subscribers; a subscriber's queue is the
 * stretch between its cursor and the head, of which it keeps at most its capacity (the newest):
 * anything older is dropped and counted when it next reads.
 *
 * The ring grows by doubling up to the largest subscriber capacity (rounded up to a power of two);
 * once there, an append over a full ring overwrites the oldest entry, which every subscription has
 * either read or is already entitled to lose. Entries read by everyone are cleared after each
 * drain, so a quiet channel pins no payloads.
 */
import type { TopicMessage } from './message.js';

const INITIAL_SLOTS = 16;

/** What a log needs of the dispatcher. */
export interface LogScheduler {
  schedule(log: TopicLog): void;
}

/** What a log needs of a subscription. */
export interface LogReader {
  /** Sequence of the next message this subscription reads. */
  cursor: number;
  readonly capacity: number;
  /** Delivers what it may of [cursor, head); called by the dispatcher, never inside publish. */
  drainFrom(log: TopicLog): void;
}

export class TopicLog {
  /** @internal */ slots: (TopicMessage | undefined)[] = new Array<TopicMessage | undefined>(INITIAL_SLOTS);
  /** @internal */ mask = INITIAL_SLOTS - 1;
  /** Sequence number the next message gets. */
  head = 0;
  /** Oldest sequence still held. */
  tail = 0;
  /** Readers, replaced (never mutated) on change so a drain can walk a stable array. */
  readers: readonly LogReader[] = [];
  /** On the dispatcher's run queue. */
  scheduled = false;
  #slotLimit = INITIAL_SLOTS;

  constructor(
    readonly scheduler: LogScheduler,
    /** The channel, or the pattern. */
    readonly topic: string,
  ) {}

  append(message: TopicMessage): void {
    if (this.head - this.tail === this.slots.length) {
      if (this.slots.length < this.#slotLimit) this.#grow();
      else this.slots[this.tail++ & this.mask] = undefined;
    }
    this.slots[this.head++ & this.mask] = message;
    if (!this.scheduled) {
      this.scheduled = true;
      this.scheduler.schedule(this);
    }
  }

  /** Asks for a drain (a reader became able to read again). */
  wake(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      this.scheduler.schedule(this);
    }
  }

  addReader(reader: LogReader): void {
    reader.cursor = this.head;
    this.readers = [...this.readers, reader];
    this.#slotLimit = Math.max(this.#slotLimit, ceilPowerOfTwo(reader.capacity));
  }

  removeReader(reader: LogReader): void {
    this.readers = this.readers.filter((other) => other !== reader);
    this.release();
  }

  /** Every reader reads what it may; then entries read by all are let go. */
  drain(): void {
    this.scheduled = false;
    const readers = this.readers;
    for (let i = 0; i < readers.length; i++) readers[i]!.drainFrom(this);
    this.release();
  }

  /** Clears entries every reader has passed, so their payloads can be collected. */
  release(): void {
    const readers = this.readers;
    let oldest = this.head;
    for (let i = 0; i < readers.length; i++) if (readers[i]!.cursor < oldest) oldest = readers[i]!.cursor;
    while (this.tail < oldest) this.slots[this.tail++ & this.mask] = undefined;
  }

  #grow(): void {
    const old = this.slots;
    const next = new Array<TopicMessage | undefined>(old.length * 2);
    const mask = next.length - 1;
    for (let seq = this.tail; seq < this.head; seq++) next[seq & mask] = old[seq & this.mask];
    this.slots = next;
    this.mask = mask;
  }
}

export function ceilPowerOfTwo(value: number): number {
  let power = 1;
  while (power < value) power *= 2;
  return power;
}

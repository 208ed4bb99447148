import type { Clock, ClockTimer } from './clock.js';

let nextSequence = 0;

/**
 * One timer entry. Entries of the same duration live in one list in deadline order (a later
 * entry of the same duration is always due later), so scheduling and cancelling are O(1) and the
 * whole service arms a single clock timer: thousands of outstanding calls cost no native timers.
 */
export class TimerEntry {
  /** Creation order: entries due at the same instant fire in the order they were set. */
  readonly sequence = nextSequence++;
  prev: TimerEntry | null = null;
  next: TimerEntry | null = null;
  list: TimerList | null = null;

  constructor(
    readonly deadline: number,
    readonly callback: (arg: unknown) => void,
    readonly arg: unknown,
  ) {}

  get active(): boolean {
    return this.list !== null;
  }
}

class TimerList {
  head: TimerEntry | null = null;
  tail: TimerEntry | null = null;

  constructor(readonly duration: number) {}

  append(entry: TimerEntry): void {
    entry.list = this;
    entry.prev = this.tail;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
  }

  remove(entry: TimerEntry): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = null;
    entry.list = null;
  }
}

/**
 * Call timeouts are the hot user: every call schedules an entry and nearly every one is cancelled
 * by its reply within microseconds. So the steady state of a call loop touches no native timer and
 * no map: the native timer stays armed (at the earliest deadline) when the last entry goes; it is
 * unreferenced only once the event loop comes round with nothing scheduled (one `setImmediate` per
 * loop turn at most, not a ref and an unref per call); and emptied duration lists stay in the map
 * (swept when the timer fires), with the last one used kept at hand. Deadlines stay exact: each
 * entry's is its own `now() + delay`, and the timer fires at the earliest one.
 */
export class TimerService {
  readonly #lists = new Map<number, TimerList>();
  #size = 0;
  #armed: ClockTimer | null = null;
  #armedFor = Infinity;
  /** Whether the armed native timer holds the process open. */
  #referenced = false;
  /** A check for "nothing scheduled" is queued for the end of this loop turn. */
  #unrefQueued = false;
  /** The list used last, so one busy duration costs no map lookup. */
  #lastList: TimerList | null = null;
  readonly #fire = (): void => this.#onFire();
  readonly #unrefIfIdle = (): void => {
    this.#unrefQueued = false;
    if (this.#size === 0 && this.#referenced) this.#reference(false);
  };

  constructor(readonly clock: Clock) {}

  /** Live entries, for leak checks and process info. */
  get size(): number {
    return this.#size;
  }

  schedule<A>(delayMs: number, callback: (arg: A) => void, arg: A): TimerEntry {
    const duration = delayMs > 0 ? delayMs : 0;
    let list = this.#lastList;
    if (list === null || list.duration !== duration) {
      list = this.#lists.get(duration) ?? null;
      if (list === null) {
        list = new TimerList(duration);
        this.#lists.set(duration, list);
      }
      this.#lastList = list;
    }
    const entry = new TimerEntry(this.clock.now() + duration, callback as (arg: unknown) => void, arg);
    list.append(entry);
    this.#size++;
    if (entry.deadline < this.#armedFor) this.#arm(entry.deadline);
    else if (!this.#referenced) this.#reference(true);
    return entry;
  }

  cancel(entry: TimerEntry): void {
    const list = entry.list;
    if (list === null) return;
    list.remove(entry);
    this.#size--;
    if (this.#size === 0 && this.#referenced && !this.#unrefQueued) {
      this.#unrefQueued = true;
      setImmediate(this.#unrefIfIdle);
    }
  }

  #reference(on: boolean): void {
    this.#referenced = on;
    if (this.#armed === null) return;
    if (on) this.clock.refTimer?.(this.#armed);
    else this.clock.unrefTimer?.(this.#armed);
  }

  #arm(deadline: number): void {
    if (this.#armed !== null) this.clock.clearTimer(this.#armed);
    this.#armedFor = deadline;
    this.#armed = this.clock.setTimer(this.#fire, Math.max(0, Math.ceil(deadline - this.clock.now())));
    this.#referenced = true;
  }

  #onFire(): void {
    this.#armed = null;
    this.#armedFor = Infinity;
    const now = this.clock.now();
    const due: TimerEntry[] = [];
    for (const list of this.#lists.values()) {
      let entry = list.head;
      while (entry !== null && entry.deadline <= now) {
        const next = entry.next;
        list.remove(entry);
        this.#size--;
        due.push(entry);
        entry = next;
      }
      if (list.head === null && list !== this.#lastList) this.#lists.delete(list.duration);
    }
    due.sort((a, b) => a.deadline - b.deadline || a.sequence - b.sequence);
    // Re-arm before running callbacks: a callback may schedule, and must not see a stale arm.
    this.#rearm();
    for (const entry of due) entry.callback(entry.arg);
  }

  #rearm(): void {
    let earliest = Infinity;
    for (const list of this.#lists.values()) {
      if (list.head !== null && list.head.deadline < earliest) earliest = list.head.deadline;
    }
    if (earliest !== Infinity && earliest < this.#armedFor) this.#arm(earliest);
  }
}

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

export class TimerService {
  readonly #lists = new Map<number, TimerList>();
  #size = 0;
  #armed: ClockTimer | null = null;
  #armedFor = Infinity;
  /** The native timer stays armed (unreferenced) when the last entry goes, so a steady stream of
   * short-lived entries (call timeouts) never pays for clearing and setting a native timer. */
  #referenced = false;
  /** The last emptied list, reused so one busy duration does not churn the map. */
  #spare: TimerList | null = null;
  readonly #fire = (): void => this.#onFire();

  constructor(readonly clock: Clock) {}

  /** Live entries, for leak checks and process info. */
  get size(): number {
    return this.#size;
  }

  schedule<A>(delayMs: number, callback: (arg: A) => void, arg: A): TimerEntry {
    const duration = delayMs > 0 ? delayMs : 0;
    let list = this.#lists.get(duration);
    if (list === undefined) {
      const spare = this.#spare;
      list = spare !== null && spare.duration === duration ? spare : new TimerList(duration);
      this.#spare = null;
      this.#lists.set(duration, list);
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
    if (list.head === null) {
      this.#lists.delete(list.duration);
      this.#spare = list;
    }
    if (this.#size === 0) this.#reference(false);
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
      if (list.head === null) this.#lists.delete(list.duration);
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

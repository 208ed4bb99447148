/**
 * Takes a look at the cluster every `sampleIntervalMs` while at least one page follows `/events`,
 * and keeps the last `samples` figures in a ring for the charts. Looks never overlap: a slow tree
 * walk delays the next one rather than piling walks up on the admin actors.
 */
import { look, type FrameSources, type Look, type ObserverFrame, type ObserverSample } from './frame.js';

export class Ring<T> {
  readonly #items: (T | undefined)[];
  #next = 0;
  #size = 0;

  constructor(readonly capacity: number) {
    this.#items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.capacity;
    this.#size = Math.min(this.#size + 1, this.capacity);
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    const start = (this.#next - this.#size + this.capacity) % this.capacity;
    for (let i = 0; i < this.#size; i++) out.push(this.#items[(start + i) % this.capacity]!);
    return out;
  }

  get size(): number {
    return this.#size;
  }
}

export class Sampler {
  readonly history: Ring<ObserverSample>;
  #last: Look | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #looking: Promise<void> | undefined;
  #closed = false;
  /** Looks that failed as a whole (a tree failure alone is part of the frame). */
  failures = 0;

  constructor(
    readonly sources: FrameSources,
    readonly intervalMs: number,
    samples: number,
    readonly onFrame: (frame: ObserverFrame) => void,
    /** A look that failed as a whole: the pages say so rather than going quiet. */
    readonly onFailure: (error: { code: string; message: string }) => void = () => {},
  ) {
    this.history = new Ring(samples);
  }

  get latest(): ObserverFrame | undefined {
    return this.#last?.frame;
  }

  /** Begins sampling (idempotent); the first look is taken now. */
  start(): void {
    if (this.#running || this.#closed) return;
    this.#running = true;
    this.#tick();
  }

  /** Stops after the look in progress; the ring is kept for the next page. */
  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
  }

  /** One look now, outside the schedule (after an operator action, so the page sees it at once). */
  async refresh(): Promise<void> {
    if (this.#looking !== undefined) return this.#looking;
    this.#looking = this.#take().finally(() => (this.#looking = undefined));
    return this.#looking;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.stop();
    await this.#looking;
  }

  #tick(): void {
    if (!this.#running) return;
    const started = Date.now();
    void this.refresh().then(() => {
      if (!this.#running) return;
      this.#timer = setTimeout(() => this.#tick(), Math.max(0, this.intervalMs - (Date.now() - started)));
      this.#timer.unref();
    });
  }

  async #take(): Promise<void> {
    try {
      const next = await look(this.sources, this.#last);
      if (this.#closed) return;
      this.#last = next;
      this.history.push(next.frame.sample);
      this.onFrame(next.frame);
    } catch (error) {
      this.failures++;
      const code = (error as { code?: unknown }).code;
      this.onFailure({ code: typeof code === 'string' ? code : 'ADMIN_SNAPSHOT_FAILED', message: error instanceof Error ? error.message : String(error) });
    }
  }
}

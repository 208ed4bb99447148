import type { ActorCell } from './actor-cell.js';
import { CellFlag } from './cell-flags.js';
import { RingQueue } from './ring-queue.js';

const { AWAITING, EXITED, SCHEDULED } = CellFlag;

const RESOLVED = Promise.resolve();

/**
 * The run queue: ready actors run in turn, each for at most `batch` callbacks, until `budget`
 * callbacks have run; then the queue yields to the event loop (`setImmediate`) so I/O is never
 * starved. ActorSystem extends it rather than owning one, so that waking an actor (every send to
 * an idle one, both legs of every call) costs no extra hop.
 */
export class Scheduler {
  readonly #runQueue = new RingQueue<ActorCell>();
  readonly #batch: number;
  readonly #budget: number;
  #drainPending = false;

  constructor(batch: number, budget: number) {
    this.#batch = batch;
    this.#budget = budget;
  }

  /** Puts a cell on the run queue (the cell has already marked itself scheduled). */
  enqueueRun(cell: ActorCell): void {
    this.#runQueue.push(cell);
    if (!this.#drainPending) {
      this.#drainPending = true;
      // A resolved promise's then costs less than queueMicrotask, which wraps each callback in an
      // AsyncResource (about 150 ns a hop, paid by every call and every child start).
      RESOLVED.then(this.#drain);
    }
  }

  readonly #drain = (): void => {
    const queue = this.#runQueue;
    const batch = this.#batch;
    let budget = this.#budget;
    while (budget > 0) {
      const cell = queue.shift();
      if (cell === undefined) break;
      if ((cell.flags & (SCHEDULED | AWAITING | EXITED)) !== SCHEDULED) continue;
      const ran = cell.run(budget < batch ? budget : batch);
      budget -= ran > 0 ? ran : 1;
      if ((cell.flags & (SCHEDULED | AWAITING | EXITED)) === SCHEDULED) queue.push(cell);
    }
    // Out of budget with work left: yield to I/O, then continue.
    if (queue.length > 0) setImmediate(this.#drain);
    else this.#drainPending = false;
  };

  /** Resolves once no actor is ready to run (async callbacks waiting on I/O may still be pending). */
  async settle(maxRounds = 10_000): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.#drainPending && this.#runQueue.length === 0) return;
    }
  }
}

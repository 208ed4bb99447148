/**
 * Dialling a node that answered `busy` (its handshake slots are all past their hello): tried again
 * soon, with a doubling jittered delay from `reconnectMinMs`, for as long as a handshake there may
 * last (twice our own deadline). Meanwhile `connect` waiters keep waiting.
 */
import { exponentialBackoff } from '../actors/backoff.js';
import type { Clock, ClockTimer } from '../actors/clock.js';

export interface BusyRetryOptions {
  readonly handshakeTimeoutMs: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
}

interface Retrying {
  readonly since: number;
  attempts: number;
  timer: ClockTimer | undefined;
}

export class BusyRetry {
  /** At most one entry per node being dialled; cleared when it links or fails otherwise. */
  readonly #nodes = new Map<string, Retrying>();

  constructor(
    readonly options: BusyRetryOptions,
    readonly dial: (node: string) => void,
    readonly clock: Clock,
  ) {}

  /** `node` said busy: true if another attempt is scheduled, false once the retry window is over. */
  retry(node: string): boolean {
    const now = this.clock.now();
    let state = this.#nodes.get(node);
    if (state === undefined) this.#nodes.set(node, (state = { since: now, attempts: 0, timer: undefined }));
    if (now - state.since > 2 * this.options.handshakeTimeoutMs) {
      this.forget(node);
      return false;
    }
    const { reconnectMinMs, reconnectMaxMs } = this.options;
    const delay = exponentialBackoff({ baseMs: reconnectMinMs, capMs: reconnectMaxMs, jitter: [0.5, 1] }, state.attempts);
    state.attempts++;
    const retrying = state;
    this.#clear(retrying);
    retrying.timer = this.clock.setTimer(() => {
      retrying.timer = undefined;
      this.dial(node);
    }, delay);
    this.clock.unrefTimer?.(retrying.timer);
    return true;
  }

  /** The node linked, or failed for another reason: no more busy retries for it. */
  forget(node: string): void {
    const state = this.#nodes.get(node);
    if (state !== undefined) this.#clear(state);
    this.#nodes.delete(node);
  }

  stop(): void {
    for (const state of this.#nodes.values()) this.#clear(state);
    this.#nodes.clear();
  }

  #clear(state: Retrying): void {
    if (state.timer !== undefined) this.clock.clearTimer(state.timer);
    state.timer = undefined;
  }
}

import { NO_REPLY } from '../../behaviours/index.js';
import type { DbError } from '../errors.js';
import type { Replier } from './ops.js';
import type { ReadyInfo } from './requests.js';

/**
 * The callers waiting for a connection to be ready (AwaitReady), and what they are told: its
 * process id and server parameters once it serves, or why it could not start.
 */
export class ReadyWaiters {
  #waiters: Replier[] = [];
  #error: DbError | null = null;

  /** An AwaitReady: answered now (with `info` when the connection serves), or when it does or fails. */
  await(from: Replier, info: ReadyInfo | undefined): unknown {
    if (this.#error !== null) return this.#error;
    if (info !== undefined) return info;
    this.#waiters.push(from);
    return NO_REPLY;
  }

  ready(info: ReadyInfo): void {
    this.#answer(info);
  }

  /** The connection could not start: waiters now and later get `error`. */
  failed(error: DbError): void {
    this.#error = error;
    this.#answer(error);
  }

  #answer(value: ReadyInfo | DbError): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reply(value);
  }
}

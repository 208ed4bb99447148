import { InvalidOption } from './errors.js';
import { RingQueue } from './ring-queue.js';

export type OverflowPolicy = 'reject' | 'drop-oldest' | 'drop-newest';

export interface MailboxOptions {
  /** Messages held at most; default {@link DEFAULT_MAILBOX_CAPACITY}, cap {@link MAX_MAILBOX_CAPACITY}. */
  readonly capacity?: number;
  /** What happens to a message that arrives at a full mailbox; default `reject`. */
  readonly overflow?: OverflowPolicy;
}

export interface ResolvedMailboxOptions {
  readonly capacity: number;
  readonly overflow: OverflowPolicy;
}

export const DEFAULT_MAILBOX_CAPACITY = 100_000;
export const MAX_MAILBOX_CAPACITY = 10_000_000;
export const DEFAULT_MAILBOX_OPTIONS: ResolvedMailboxOptions = Object.freeze({
  capacity: DEFAULT_MAILBOX_CAPACITY,
  overflow: 'reject',
});

export function resolveMailboxOptions(options: MailboxOptions | undefined): ResolvedMailboxOptions {
  if (options === undefined || (options.capacity === undefined && options.overflow === undefined)) {
    return DEFAULT_MAILBOX_OPTIONS;
  }
  const capacity = options.capacity ?? DEFAULT_MAILBOX_CAPACITY;
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_MAILBOX_CAPACITY) {
    throw new InvalidOption('mailbox.capacity', `must be an integer in 1..${MAX_MAILBOX_CAPACITY}, got ${capacity}`);
  }
  const overflow = options.overflow ?? 'reject';
  if (overflow !== 'reject' && overflow !== 'drop-oldest' && overflow !== 'drop-newest') {
    throw new InvalidOption('mailbox.overflow', `must be reject, drop-oldest or drop-newest, got ${String(overflow)}`);
  }
  return Object.freeze({ capacity, overflow });
}

/**
 * An actor's queue. Capacity is enforced by the actor, not here, because kernel signals (EXIT,
 * DOWN) must never be refused or dropped.
 */
export class Mailbox<T = unknown> extends RingQueue<T> {}

/**
 * Write events: one per row an ORM write touched, published after its transaction commits (a
 * rolled-back write publishes nothing; a write outside a transaction commits by itself and publishes
 * at once). The cache and, later, replication subscribe with `subscribe(fn) → unsubscribe`.
 *
 * Ordering: `commitSeq` is a per-channel counter (one channel per `Orm`, so per database handle in
 * this process) incremented once for each commit that carried writes, in the order the ORM saw
 * the COMMITs succeed; `statementSeq` numbers the events within their transaction (1, 2, ...). Events
 * are delivered in (commitSeq, statementSeq) order, gap-free.
 *
 * Delivery is synchronous: after COMMIT and before the transaction's promise resolves, every
 * subscriber is called with every event in order, so a caller that awaited a write reads the cache
 * already invalidated. Subscribers must be quick and must not block (schedule work elsewhere); one
 * that throws is isolated (counted and logged) and the others still get the event. A subscriber that
 * writes through the ORM from its callback cannot reenter: its write completes later and is
 * published after the current batch. Nothing is buffered across commits, so the channel needs no
 * queue; what is bounded is the number of subscribers (`maxSubscribers`, default 64, cap 1,024).
 */
import { InvalidDataConfig } from '../errors.js';
import type { Value } from '../values.js';

export type WriteOp = 'insert' | 'update' | 'delete';

export interface OrmWriteEvent {
  readonly table: string;
  /** The row's primary key: its value, or an array of values (in key order) for a composite key. */
  readonly primaryKey: Value;
  readonly op: WriteOp;
  /** The row's version after the write (for a delete: the version it had), when the model keeps one. */
  readonly version?: bigint | number;
  /** The transaction's id: per channel, increasing; an implicit (single-statement) transaction has its own. */
  readonly txId: number;
  readonly commitSeq: number;
  readonly statementSeq: number;
}

export type WriteListener = (event: OrmWriteEvent) => void;

export const EVENT_DEFAULTS = { maxSubscribers: 64 } as const;
export const EVENT_CAPS = { maxSubscribers: 1024 } as const;

/** An event before commit: the sequence numbers are assigned when it is published. */
export type PendingEvent = Omit<OrmWriteEvent, 'commitSeq' | 'statementSeq' | 'txId'>;

export class WriteEventChannel {
  private listeners: WriteListener[] = [];
  private nextTxId = 1;
  private commitSeq = 0;
  private readonly maxSubscribers: number;
  /** Subscriber exceptions, counted so a broken subscriber shows without breaking writes. */
  listenerErrors = 0;
  private onListenerError: ((error: unknown) => void) | undefined;

  constructor(options: { readonly maxSubscribers?: number; readonly onListenerError?: (error: unknown) => void } = {}) {
    const max = options.maxSubscribers ?? EVENT_DEFAULTS.maxSubscribers;
    if (!Number.isInteger(max) || max < 1 || max > EVENT_CAPS.maxSubscribers) {
      throw new InvalidDataConfig('orm.events.maxSubscribers', `must be an integer from 1 to ${EVENT_CAPS.maxSubscribers}, got ${max}`);
    }
    this.maxSubscribers = max;
    this.onListenerError = options.onListenerError;
  }

  /** Calls `listener` with every event published from now on; returns the function that unsubscribes. */
  subscribe(listener: WriteListener): () => void {
    if (this.listeners.length >= this.maxSubscribers) {
      throw new InvalidDataConfig('orm.events.maxSubscribers', `already ${this.maxSubscribers} subscribers`);
    }
    // Copy on write: a listener that unsubscribes during delivery does not disturb the loop.
    this.listeners = [...this.listeners, listener];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  get subscribers(): number {
    return this.listeners.length;
  }

  /** The last commit sequence published (0 before any). */
  get lastCommitSeq(): number {
    return this.commitSeq;
  }

  /** A new transaction id. */
  beginTx(): number {
    return this.nextTxId++;
  }

  /** Publishes a committed transaction's events: one commit sequence for all, in statement order. */
  publish(txId: number, events: readonly PendingEvent[]): void {
    if (events.length === 0) return;
    const commitSeq = ++this.commitSeq;
    const listeners = this.listeners;
    if (listeners.length === 0) return;
    for (let i = 0; i < events.length; i++) {
      const event: OrmWriteEvent = { ...events[i]!, txId, commitSeq, statementSeq: i + 1 };
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          this.listenerErrors++;
          this.onListenerError?.(error);
        }
      }
    }
  }
}

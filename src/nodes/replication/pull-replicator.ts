/**
 * One peer's changes coming in: the replicator applies what the peer pushes when it follows on from
 * the persisted cursor, and otherwise pulls from the peer's oplog by sequence until caught up (on
 * start, after a gap, after a wake-up). A peer whose oplog no longer holds the cursor answers
 * `behind`: the replicator resyncs from the peer's snapshot, then tails from its high water.
 *
 * A failed round (the peer slow or gone, an apply that failed) backs off and retries; after
 * `maxFailures` in a row the replicator crashes, and its supervisor's restart intensity decides.
 * A round that makes no progress (the sink refused the next entry: a clock too far ahead) waits the
 * longest backoff and tries again, without crashing: the entry is retried, never skipped.
 */
import { exponentialBackoff } from '../../actors/backoff.js';
import type { TimerEntry } from '../../actors/index.js';
import { GenServer } from '../../behaviours/index.js';
import type { OplogEntry } from '../../data/replication/contract.js';
import type { PeerService } from '../peer-service.js';
import type { ResolvedReplicationOptions } from './options.js';
import { checkPullAnswer, checkSnapshotPage } from './wire.js';

export type PullState = 'starting' | 'catching-up' | 'live' | 'resyncing' | 'backoff' | 'stalled';

export interface PullStatus {
  readonly peer: string;
  readonly direction: 'pull';
  readonly state: PullState;
  /** The last of the peer's entries applied here (persisted with them). */
  readonly cursor: number;
  /** The peer's last known head. */
  readonly head: number;
  /** Entries behind the peer: head − cursor. */
  readonly lag: number;
  readonly applied: number;
  readonly resyncs: number;
  readonly failures: number;
  readonly lastError: string | null;
}

export type PullInfo =
  | { readonly kind: 'push'; readonly entries: readonly OplogEntry[]; readonly head: number }
  | { readonly kind: 'wake'; readonly head: number }
  | { readonly kind: 'retry' };

/** Where a replicator reports its counts and its ref (the service's table: pushes are routed by it, metrics and health read it). */
export type StatusSink = (status: PullStatus, ref: unknown) => void;

/** A peer's answer that is not the shape the protocol has: a round failure with its reason. */
class PeerProtocolError extends Error {}

export class PullReplicator extends GenServer<'status', PullStatus, never, PullInfo, 'catch-up'> {
  #state: PullState = 'starting';
  #cursor = 0;
  #head = 0;
  #applied = 0;
  #resyncs = 0;
  #failures = 0;
  #lastError: string | null = null;
  #retry: TimerEntry | undefined;

  constructor(
    private readonly peer: string,
    private readonly service: PeerService,
    private readonly options: ResolvedReplicationOptions,
    private readonly report: StatusSink,
  ) {
    super();
  }

  override async init(): Promise<void> {
    this.#cursor = await this.options.sink.cursor(this.peer);
    this.#publish();
    this.continueWith('catch-up');
  }

  override async handleContinue(): Promise<void> {
    await this.#round(() => this.#catchUp());
  }

  override handleCall(): PullStatus {
    return this.status();
  }

  override async handleInfo(message: PullInfo): Promise<void> {
    switch (message.kind) {
      case 'push':
        this.#head = Math.max(this.#head, message.head, message.entries.at(-1)?.seq ?? 0);
        if (this.#waiting()) break;
        await this.#round(async () => {
          // A batch that follows on from the cursor (or overlaps it: the sink skips what it has) is applied as it came.
          if (message.entries.length > 0 && message.entries[0]!.seq <= this.#cursor + 1) await this.#apply(message.entries);
          if (this.#cursor < this.#head) await this.#catchUp();
        });
        break;
      case 'wake':
        this.#head = Math.max(this.#head, message.head);
        if (!this.#waiting() && this.#cursor < this.#head) await this.#round(() => this.#catchUp());
        break;
      case 'retry':
        this.#retry = undefined;
        await this.#round(() => this.#catchUp());
        break;
    }
    this.#publish();
  }

  status(): PullStatus {
    return {
      peer: this.peer,
      direction: 'pull',
      state: this.#state,
      cursor: this.#cursor,
      head: this.#head,
      lag: Math.max(0, this.#head - this.#cursor),
      applied: this.#applied,
      resyncs: this.#resyncs,
      failures: this.#failures,
      lastError: this.#lastError,
    };
  }

  #waiting(): boolean {
    return this.#retry !== undefined;
  }

  async #round(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      this.#failures = 0;
      if (this.#state !== 'stalled') this.#state = 'live';
    } catch (error) {
      this.#failures++;
      this.#lastError = describe(error);
      this.service.node.logger.warn({ node: this.service.node.name, peer: this.peer, failures: this.#failures, err: error }, 'replication.pull_failed');
      if (this.#failures >= this.options.maxFailures) throw error;
      this.#state = 'backoff';
      const delay = exponentialBackoff({ baseMs: this.options.retryMinMs, capMs: this.options.retryMaxMs, jitter: [0.75, 1.25] }, this.#failures - 1);
      this.#retry = this.ctx.sendAfter(delay, { kind: 'retry' } satisfies PullInfo);
    }
    this.#publish();
  }

  async #catchUp(): Promise<void> {
    this.#state = 'catching-up';
    // One pull ahead: the next batch is asked for (after this one's last sequence) while this one
    // applies, so the peer's read and the transfer overlap the local apply.
    let pending: Promise<unknown> | undefined;
    for (;;) {
      const raw = await (pending ?? this.#pull(this.#cursor));
      pending = undefined;
      const answer = checkPullAnswer(raw);
      if (answer === undefined) throw new PeerProtocolError(`malformed pull answer from ${this.peer}`);
      if ('failed' in answer) throw new PeerProtocolError(`${this.peer} could not answer the pull: ${answer.failed}`);
      this.#head = Math.max(this.#head, answer.head);
      if ('behind' in answer) {
        await this.#resync(answer.behind);
        continue;
      }
      if (answer.entries.length === 0) {
        // The peer has nothing after the cursor: its head is where we are.
        this.#head = Math.max(this.#cursor, answer.head);
        return;
      }
      const last = answer.entries.at(-1)!.seq;
      if (last < this.#head) {
        pending = this.#pull(last);
        // Settled on every path: a prefetch left behind must not become an unhandled rejection.
        pending.catch(() => undefined);
      }
      const before = this.#cursor;
      await this.#apply(answer.entries);
      if (this.#cursor === before) {
        // Refused (a timestamp beyond the drift cap) or out of order: try again later, never skip.
        this.#state = 'stalled';
        this.#retry = this.ctx.sendAfter(this.options.retryMaxMs, { kind: 'retry' } satisfies PullInfo);
        return;
      }
      this.#publish();
      // The prefetched batch follows `last`; if the apply stopped short of it, ask again from the cursor.
      if (this.#cursor !== last) pending = undefined;
      if (this.#cursor >= this.#head && pending === undefined) return;
    }
  }

  #pull(afterSeq: number): Promise<unknown> {
    return this.service.call(this.peer, 'pull', [afterSeq], this.options.callTimeoutMs);
  }

  async #apply(entries: readonly OplogEntry[]): Promise<void> {
    const result = await this.options.sink.apply(this.peer, entries);
    this.#applied += result.applied;
    this.#cursor = Math.max(this.#cursor, result.cursor);
  }

  /**
   * The full resync (docs/replication.md): the peer's current state page by page, then its tail from
   * the snapshot's high water. Logged with the code of the typed error that caused it.
   */
  async #resync(oldestSeq: number): Promise<void> {
    this.#state = 'resyncing';
    this.#resyncs++;
    this.service.node.logger.warn(
      { node: this.service.node.name, peer: this.peer, cursor: this.#cursor, oldestSeq, code: 'REPLICATION_BEHIND_RETENTION' },
      'replication.resync',
    );
    this.#publish();
    let afterKey: { model: string; key: string } | null = null;
    for (;;) {
      const page = checkSnapshotPage(await this.service.call(this.peer, 'snapshot', [afterKey], this.options.callTimeoutMs));
      if (page === undefined) throw new PeerProtocolError(`malformed snapshot page from ${this.peer}`);
      if ('failed' in page) throw new PeerProtocolError(`${this.peer} could not answer the snapshot: ${page.failed}`);
      const result = await this.options.sink.applySnapshot(this.peer, page);
      this.#applied += result.applied;
      if (page.next === null) {
        this.#cursor = Math.max(this.#cursor, result.cursor);
        this.#head = Math.max(this.#head, page.highWater);
        return;
      }
      afterKey = { model: page.next.model, key: page.next.key };
    }
  }

  #publish(): void {
    this.report(this.status(), this.self);
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof code === 'string' ? `${code}: ${message}` : message).slice(0, 300);
}

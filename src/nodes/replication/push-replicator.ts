/**
 * This node's changes going out to one peer: after each commit that appended to the oplog, the
 * replicator reads what it has not pushed yet and sends it, a sync batch at a time, at most
 * `pushBatches` batches per wake-up; the rest it leaves to the peer, told by a `wake` with the head,
 * to pull at its own pace. Pushes are an optimisation of the pull: a push the link dropped (its
 * queue full) or the peer could not place is filled in by the peer's next pull, so nothing here
 * needs an acknowledgement. It starts at the head: what came before, the peer pulls on connect.
 */
import { GenServer } from '../../behaviours/index.js';
import type { PeerService } from '../peer-service.js';
import type { ResolvedReplicationOptions } from './options.js';
import { WIRE_BATCH_CAPS } from './wire.js';

export interface PushStatus {
  readonly peer: string;
  readonly direction: 'push';
  /** The last of this node's entries pushed to the peer. */
  readonly pushed: number;
  readonly head: number;
  readonly batches: number;
}

type PushInfo = { readonly kind: 'appended' };

export class PushReplicator extends GenServer<'status', PushStatus, never, PushInfo> {
  #pushed = 0;
  #head = 0;
  #batches = 0;
  #pending = false;
  #off: (() => void) | undefined;

  constructor(
    private readonly peer: string,
    private readonly service: PeerService,
    private readonly options: ResolvedReplicationOptions,
  ) {
    super();
  }

  override async init(): Promise<void> {
    this.#head = this.#pushed = await this.options.source.highWater();
    const self = this.self;
    const system = this.ctx.system;
    // One wake-up in the mailbox at a time however many commits land meanwhile: the read catches up on all of them.
    this.#off = this.options.source.onAppend((head) => {
      this.#head = Math.max(this.#head, head);
      if (this.#pending) return;
      this.#pending = true;
      system.send(self, { kind: 'appended' } satisfies PushInfo);
    });
    this.service.sendTo(this.peer, 'wake', this.#head);
  }

  override handleCall(): PushStatus {
    return { peer: this.peer, direction: 'push', pushed: this.#pushed, head: this.#head, batches: this.#batches };
  }

  override async handleInfo(): Promise<void> {
    this.#pending = false;
    for (let batch = 0; batch < this.options.pushBatches; batch++) {
      let entries;
      try {
        entries = await this.options.source.read(this.#pushed, WIRE_BATCH_CAPS);
      } catch {
        // Pruned past what was pushed (or unreadable now): the peer's pull finds out and resyncs.
        break;
      }
      if (entries.length === 0) return;
      this.service.sendTo(this.peer, 'push', entries, this.#head);
      this.#pushed = entries.at(-1)!.seq;
      this.#batches++;
    }
    if (this.#pushed < this.#head) this.service.sendTo(this.peer, 'wake', this.#head);
  }

  override terminate(): void {
    this.#off?.();
  }
}

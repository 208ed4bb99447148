/**
 * A room's bridge on one instance: a supervised actor that tails the room's topic on the bus from
 * its head and hands each item to the local members, through its mailbox (one at a time, in
 * order). Started when the first local socket joins, stopped when the last one leaves.
 */
import type { BusItem, BusSubscription } from '../bus/index.js';
import { GenServer } from '../../behaviours/index.js';
import type { RoomsHub } from './hub.js';

export interface BridgeStatus {
  readonly room: string;
  readonly nextSeq: number;
  readonly members: number;
}

export class RoomBridge extends GenServer<'status', BridgeStatus, never, BusItem> {
  #subscription: BusSubscription | undefined;

  constructor(
    private readonly hub: RoomsHub,
    private readonly room: string,
    private readonly topic: string,
    private readonly deliver: (item: BusItem) => void,
  ) {
    super();
  }

  override async init(): Promise<void> {
    // A restarted bridge resumes below the members' positions (their own sequences drop what they
    // already have), so a crash between two items loses neither; a new one starts at the head.
    const resume = this.hub.resumeSeq(this.room);
    const from = resume ?? (await this.hub.bus.lastSeq(this.topic)) + 1;
    const self = this.ctx.self;
    this.hub.bridges.set(this.deliver, self);
    this.#subscription = this.hub.bus.subscribe(this.topic, from, (item) => this.ctx.send(self, item));
  }

  override handleCall(): BridgeStatus {
    return { room: this.room, nextSeq: this.#subscription?.nextSeq ?? 0, members: this.hub.rooms.get(this.room)?.members.size ?? 0 };
  }

  override handleInfo(item: BusItem): void {
    if (typeof item === 'object' && item !== null && 'kind' in item) this.deliver(item);
  }

  override terminate(): void {
    this.#subscription?.unsubscribe();
    if (this.hub.bridges.get(this.deliver) === this.ctx.self) this.hub.bridges.delete(this.deliver);
  }
}

/** The instance's direct-message tail (sends to one socket), also a supervised actor. */
export class DirectBridge extends GenServer<never, unknown, never, BusItem> {
  #subscription: BusSubscription | undefined;

  constructor(private readonly hub: RoomsHub) {
    super();
  }

  override async init(): Promise<void> {
    const head = await this.hub.bus.lastSeq(this.hub.directTopic);
    const self = this.ctx.self;
    this.#subscription = this.hub.bus.subscribe(this.hub.directTopic, head + 1, (item) => this.ctx.send(self, item));
  }

  override handleInfo(item: BusItem): void {
    if (typeof item === 'object' && item !== null && 'kind' in item) this.hub.directItem(item);
  }

  override terminate(): void {
    this.#subscription?.unsubscribe();
  }
}

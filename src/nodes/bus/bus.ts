/**
 * The bus rooms (and, later, the replication change feed) share: named topics, each an ordered log
 * with gapless sequences. `publish` appends once and resolves with the sequence once durable;
 * `read` serves catch-up from any sequence, saying by a typed gap which part of the range is past
 * retention (never silently skipping it); `subscribe` tails a topic from a sequence on this
 * instance, in order, with gaps reported in-band. Implementations: Postgres (postgresBus).
 */
export interface BusMessage {
  readonly topic: string;
  readonly seq: number;
  /** Publish time, ms since the epoch. */
  readonly time: number;
  readonly payload: unknown;
}

/** Sequences `from..to` (inclusive) of `topic` are past retention: evicted, never to be read again. */
export interface BusGap {
  readonly topic: string;
  readonly from: number;
  readonly to: number;
}

export interface BusRead {
  /** In sequence order, all above any gap. */
  readonly messages: readonly BusMessage[];
  readonly gap: BusGap | undefined;
  /** The topic's last sequence when read (0: none yet). */
  readonly lastSeq: number;
}

export type BusItem = ({ readonly kind: 'message' } & BusMessage) | ({ readonly kind: 'gap' } & BusGap);

export interface BusSubscription {
  /** The next sequence this subscription will hand out. */
  readonly nextSeq: number;
  unsubscribe(): void;
}

export interface Bus {
  readonly kind: string;
  publish(topic: string, payload: unknown): Promise<number>;
  /** Messages of `topic` from `fromSeq` on, at most `limit` (default 100, at most 1,000). */
  read(topic: string, fromSeq: number, limit?: number): Promise<BusRead>;
  lastSeq(topic: string): Promise<number>;
  /** Hands out every item of `topic` from `fromSeq` on, in order, one handler call at a time. */
  subscribe(topic: string, fromSeq: number, handler: (item: BusItem) => void): BusSubscription;
  close(): Promise<void>;
}

/** The gap, if any, at the head of a range read from `fromSeq`: what lies below the first retained message. */
export function gapOf(topic: string, fromSeq: number, firstSeq: number | undefined, lastSeq: number): BusGap | undefined {
  const end = firstSeq === undefined ? lastSeq : firstSeq - 1;
  return end >= fromSeq ? { topic, from: fromSeq, to: end } : undefined;
}

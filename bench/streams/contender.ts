/**
 * One message system in the streams suite: Molo on SQLite or Postgres, NATS JetStream, Redis
 * Streams. Each runs the same three timed phases on 1 KiB messages: publish n (async, many in
 * flight), consume + ack n already stored, and end to end (publisher and consumer at once, timed
 * until the last message is acked).
 */
export interface StreamContender {
  readonly impl: string;
  /** Connects, or throws (the rows then say the peer is unavailable). */
  open(): Promise<void>;
  /** A fresh stream and consumer (untimed). */
  reset(): Promise<void>;
  publish(n: number, payload: Buffer): Promise<void>;
  /** Consumes and acks n messages; answers how many distinct ones it saw. */
  consume(n: number): Promise<number>;
  endToEnd(n: number, payload: Buffer): Promise<number>;
  /** Bytes the system holds for the messages retained now (disk or memory), or null when it cannot say. */
  retainedBytes(): Promise<{ readonly bytes: number; readonly where: string } | null>;
  close(): Promise<void>;
}

/** Messages kept in flight by an async publisher before it waits for acks. */
export const PUBLISH_WINDOW = 1_000;
/** Messages one fetch, read or pull asks for. */
export const FETCH_BATCH = 500;

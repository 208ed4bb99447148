/**
 * The SQL stream store's options and span names (apart from the store class, which reads them).
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../../actors/index.js';
import type { DataContext } from '../../data/index.js';
import type { Logger } from '../../telemetry/index.js';
import type { StreamEvent } from './store.js';

export const StreamSpanName = {
  /** One publish, from the call to its commit. */
  publish: 'molo.stream.publish',
  /** One delivery handed to a StreamConsumer's handler, to its ack or nak. */
  deliver: 'molo.stream.deliver',
} as const;

export interface SqlStreamStoreOptions {
  /** Names the store in metrics and logs (default `streams`). */
  readonly name?: string;
  /** Table prefix (default `molo_stream`); several stores may share a database under different prefixes. */
  readonly table?: string;
  /** Publish time, ack deadlines, retention by age and the de-duplication window read it. Default: the system clock. */
  readonly clock?: Clock;
  /** Publishes one group commit takes at most (default 512; 1..4,096). */
  readonly publishBatch?: number;
  /** Rows one retention pass deletes at most per rule and stream, and one statement of deleteStream (default 1,000; 1..100,000). */
  readonly retentionBatch?: number;
  /** A waiting fetch looks again this often without a wake-up (default 1,000 ms; 10..60,000). */
  readonly pollIntervalMs?: number;
  /**
   * Raises the ceilings of a stream's `maxAgeMs` and `maxBytes` above the seed's 24 h and 1 GiB
   * (S7-10), for deployments that size their disk for it: without it, a stream asking for more is
   * refused with StreamCapExceeded naming `streams.maxAgeMs` or `streams.maxBytes`.
   */
  readonly retentionCeilings?: { readonly maxAgeMs?: number; readonly maxBytes?: number };
  /** Payload cap (default and ceiling 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Prometheus registry for the stream metrics; none: no metrics. */
  readonly metrics?: Registry;
  readonly logger?: Logger;
  /** Terminations and evictions, as they happen. */
  readonly onEvent?: (event: StreamEvent) => void;
  /** Close the database on `close()` (set when the store opened it). */
  readonly ownsDatabase?: boolean;
  readonly ctx?: DataContext;
}

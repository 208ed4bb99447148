// Durable streams: a persisted log with named consumers, acks and redelivery, on SQLite and Postgres.
export { StreamAckUnknown, StreamCapExceeded, StreamConflict, StreamConsumerNotFound, StreamInvalidArgument, StreamNotFound, StreamSettleStale, StreamStoreClosed } from './errors.js';
export { CONSUMER_DEFAULTS, STREAM_DEFAULTS, STREAM_LIMITS, STREAM_STORE_DEFAULTS } from './limits.js';
export { openSqliteStreams, openStreams, STREAMS_DEFAULT_SYNCHRONOUS } from './open.js';
export { SqlStreamStore, StreamSpanName, type SqlStreamStoreOptions } from './sql-store.js';
// Every type of the store interface is public.
export type * from './store.js';
export {
  STREAM_CONSUMER_BEHAVIOUR,
  StreamConsumer,
  StreamConsumerServer,
  type NakBackoff,
  type StreamConsumerOptions,
  type StreamConsumerStatus,
  type StreamHandler,
} from './consumer.js';
export { StreamRetention, StreamRetentionServer, type StreamRetentionOptions, type StreamRetentionStatus } from './retention.js';

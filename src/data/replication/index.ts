// Replication, data side: the hybrid clock, the oplog written in the data's own transaction, its source and sink.
export * from './contract.js';
export {
  HybridClock,
  encodeHlc,
  decodeHlc,
  compareHlc,
  HLC_ZERO,
  HLC_DEFAULTS,
  HLC_CAPS,
  HLC_MAX_COUNTER,
  type HybridClockOptions,
  type HybridTimestamp,
} from './hlc.js';

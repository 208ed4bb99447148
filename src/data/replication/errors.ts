/**
 * Replication errors (data side): `DbError`s whose codes are registered in `DataErrorCode`
 * (src/data/errors.ts) and documented in docs/errors.md.
 */
import { DataErrorCode, DbError } from '../errors.js';

/**
 * A reader asked for entries after `afterSeq`, but the oplog keeps only those from `oldestSeq` on:
 * what lies between was pruned. Tailing cannot fill the gap; the reader resyncs from the source's
 * `snapshot()` and tails from the snapshot's high water (docs/replication.md, "Resync").
 */
export class OplogBehindRetention extends DbError {
  static override readonly code = DataErrorCode.ReplicationBehindRetention;
  constructor(
    readonly instance: string,
    readonly afterSeq: number,
    readonly oldestSeq: number,
  ) {
    super(
      `oplog of ${instance}: entries after ${afterSeq} were pruned (oldest kept is ${oldestSeq}); resync from snapshot()`,
      {},
      DataErrorCode.ReplicationBehindRetention,
      false,
    );
  }
}

/** A hybrid timestamp that is not in the encoding `hlc.ts` writes (from a peer or a stored row). */
export class InvalidHybridTimestamp extends DbError {
  static override readonly code = DataErrorCode.ReplicationInvalidTimestamp;
  constructor(readonly text: string) {
    super(`not a hybrid timestamp: ${JSON.stringify(text.slice(0, 64))}`, {}, DataErrorCode.ReplicationInvalidTimestamp, false);
  }
}

/**
 * A remote timestamp further ahead of this node's wall clock than the accepted drift: applying it
 * would drag every later local timestamp into the future, so the entry is refused (and counted).
 */
export class ClockDriftExceeded extends DbError {
  static override readonly code = DataErrorCode.ReplicationClockDrift;
  constructor(
    readonly aheadMs: number,
    readonly maxDriftMs: number,
  ) {
    super(`remote timestamp is ${aheadMs} ms ahead of the local clock; replication.maxDriftMs is ${maxDriftMs}`, {}, DataErrorCode.ReplicationClockDrift, false);
  }
}

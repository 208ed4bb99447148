/**
 * KV store errors: `DbError`s whose codes are registered in `DataErrorCode` (src/data/errors.ts) and
 * documented in docs/errors.md.
 */
import { DataErrorCode, DbError } from '../errors.js';

/**
 * A KV call went past one of the store's caps; `.cap` names it (`kv.maxKeyBytes`, `kv.maxValueBytes`,
 * `kv.maxTtlMs`, `kv.maxScanLimit`, `kv.maxBytes`), `.limit` is the cap and `.actual` what was asked.
 */
export class KvCapExceeded extends DbError {
  static override readonly code = DataErrorCode.KvCapExceeded;
  constructor(
    readonly cap: string,
    readonly limit: number,
    readonly actual: number,
  ) {
    super(`${cap} is ${limit}, got ${actual}`, {}, DataErrorCode.KvCapExceeded, false);
  }
}

/** A KV call with an argument of the wrong kind (a key that is not well-formed text, a value that is not bytes, a bad cursor). */
export class KvInvalidArgument extends DbError {
  static override readonly code = DataErrorCode.KvInvalidArgument;
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`invalid ${argument}: ${message}`, {}, DataErrorCode.KvInvalidArgument, false);
  }
}

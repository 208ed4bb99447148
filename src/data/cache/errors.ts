/**
 * Cache errors: `DbError`s whose codes are registered in `DataErrorCode` (src/data/errors.ts) and
 * documented in docs/errors.md.
 */
import { DataErrorCode, DbError } from '../errors.js';

/**
 * A cache call went past one of the cache's caps; `.cap` names it (`cache.maxTtlMs`,
 * `cache.maxNegativeTtlMs`, `cache.maxTags`, `cache.maxBytes`, `cache.maxInflight`).
 */
export class CacheCapExceeded extends DbError {
  static override readonly code = DataErrorCode.CacheCapExceeded;
  constructor(
    readonly cap: string,
    readonly limit: number,
    readonly actual: number,
  ) {
    super(`${cap} is ${limit}, got ${actual}`, {}, DataErrorCode.CacheCapExceeded, false);
  }
}

/** A cache call with an argument of the wrong kind (a key or tag that is not a string, a TTL that is not a positive integer). */
export class CacheInvalidArgument extends DbError {
  static override readonly code = DataErrorCode.CacheInvalidArgument;
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`invalid ${argument}: ${message}`, {}, DataErrorCode.CacheInvalidArgument, false);
  }
}

/**
 * A cache compute did not settle within `computeTimeoutMs` (default 30 s): its callers fail with
 * this and the key is free again, so one hung compute cannot hold a key's callers forever.
 */
export class CacheComputeTimeout extends DbError {
  static override readonly code = DataErrorCode.CacheComputeTimeout;
  constructor(
    readonly key: string,
    readonly timeoutMs: number,
  ) {
    super(`cache compute for ${JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}…` : key)} did not settle within ${timeoutMs} ms (cache.computeTimeoutMs)`, {}, DataErrorCode.CacheComputeTimeout, true);
  }
}

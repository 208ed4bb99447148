/** Errors of leader leases; their codes are in the bus registry (`BusErrorCode`). */
import { MoloError } from '../../actors/index.js';
import { BusErrorCode } from '../errors.js';

/**
 * A fenced write refused: its token is lower than the highest token already seen for its key, so
 * it comes from a leader that has since been deposed. Thrown inside the caller's transaction, which
 * then rolls back.
 */
export class StaleFencingToken extends MoloError {
  static readonly code = BusErrorCode.StaleFencingToken;
  constructor(
    readonly key: string,
    readonly token: number,
    readonly highest: number,
  ) {
    super(BusErrorCode.StaleFencingToken, `fencing token ${token} for '${key}' is lower than the highest seen, ${highest}: refused`);
  }
}

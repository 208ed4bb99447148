/** Errors of leader leases; their codes are in the bus registry (`BusErrorCode`). */
import { codedError } from '../../actors/coded-error.js';
import { BusErrorCode } from '../errors.js';

/**
 * A fenced write refused: its token is lower than the highest token already seen for its key, so
 * it comes from a leader that has since been deposed. Thrown inside the caller's transaction, which
 * then rolls back.
 */
export class StaleFencingToken extends codedError(BusErrorCode.StaleFencingToken, (key: string, token: number, highest: number) => ({
  message: `fencing token ${token} for '${key}' is lower than the highest seen, ${highest}: refused`,
  fields: { key, token, highest },
})) {}

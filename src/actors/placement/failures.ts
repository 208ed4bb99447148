/**
 * How failures cross a placement boundary: a call's typed error travels as a CallFailure and is
 * rebuilt on the caller's side, and an exit reason that cannot be encoded is replaced by one that can.
 */
import { CalleeExited, CallTimeout, MailboxFull, NoProc, NotSerializable, PayloadTooLarge } from '../errors.js';
import { formatReason, type ExitReason } from '../exit.js';
import type { CallRequest } from '../messages.js';
import { checkCallFailure, type CallFailure } from './frames.js';

/** How a call failure travels back to the caller. */
export function callFailure(error: unknown): CallFailure {
  if (error instanceof CalleeExited) return ['exited', error.reason];
  if (error instanceof NoProc) return ['noproc'];
  if (error instanceof CallTimeout) return ['timeout'];
  if (error instanceof MailboxFull) return ['mailbox_full', error.capacity];
  if (error instanceof PayloadTooLarge) return ['payload_too_large', error.sizeBytes, error.limitBytes];
  return ['error', error instanceof Error ? error : new Error(String(error))];
}

/** The caller's typed error for a failure its callee's system reported. */
export function failureToError(call: CallRequest, value: unknown): unknown {
  const failure = checkCallFailure(value);
  if (failure === undefined) return new CalleeExited(call.callee, new Error('malformed reply'));
  switch (failure[0]) {
    case 'exited':
      return new CalleeExited(call.callee, failure[1]);
    case 'noproc':
      return new NoProc(call.callee);
    case 'timeout':
      return new CallTimeout(call.callee, call._timeoutMs);
    case 'mailbox_full':
      return new MailboxFull(call.callee, failure[1]);
    case 'payload_too_large':
      return new PayloadTooLarge(failure[1], failure[2]);
    case 'error':
      return failure[1];
    default: {
      const unknown: never = failure;
      return unknown;
    }
  }
}

/** An exit reason that can always be encoded: the original, simplified to plain data. */
export function portableReason(reason: ExitReason, failure: unknown): ExitReason {
  if (typeof reason === 'string') return reason;
  const why = failure instanceof NotSerializable || failure instanceof PayloadTooLarge ? failure.message : String(failure);
  if (reason instanceof Error) {
    const error = new Error(`${reason.name}: ${reason.message}`.slice(0, 4_096));
    (error as Error & { code?: unknown }).code = (reason as Error & { code?: unknown }).code;
    return error;
  }
  return { shutdown: `${formatReason(reason).slice(0, 4_096)} (${why})` };
}

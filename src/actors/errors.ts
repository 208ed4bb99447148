/**
 * Error registry of the actor kernel. Every code is stable: never renamed, never reused.
 * `docs/errors.md` documents each one; a test holds the two together.
 */
import type { ExitReason } from './exit.js';
import { formatReason } from './exit.js';
import type { Ref } from './ref.js';
import { codedError, MoloError, optionError } from './coded-error.js';

export { MoloError };

export const ActorErrorCode = {
  NoProc: 'ACTOR_NOPROC',
  MailboxFull: 'ACTOR_MAILBOX_FULL',
  CallTimeout: 'ACTOR_CALL_TIMEOUT',
  CalleeExited: 'ACTOR_CALLEE_EXITED',
  NameTaken: 'ACTOR_NAME_TAKEN',
  AlreadyNamed: 'ACTOR_ALREADY_NAMED',
  InvalidOption: 'ACTOR_INVALID_OPTION',
  NotInActor: 'ACTOR_NOT_IN_ACTOR',
  ReceivePending: 'ACTOR_RECEIVE_PENDING',
  SystemStopped: 'ACTOR_SYSTEM_STOPPED',
  ActorCrashed: 'ACTOR_CRASHED',
  ActorLimit: 'ACTOR_LIMIT_REACHED',
  PayloadTooLarge: 'PLACEMENT_PAYLOAD_TOO_LARGE',
  NotSerializable: 'PLACEMENT_NOT_SERIALIZABLE',
  PlacementFailed: 'PLACEMENT_FAILED',
  InvalidPlacement: 'PLACEMENT_INVALID',
  CallingSelf: 'ACTOR_CALLING_SELF',
  InvalidRef: 'ACTOR_INVALID_REF',
} as const;
export type ActorErrorCode = (typeof ActorErrorCode)[keyof typeof ActorErrorCode];

const describe = (target: Ref | string): string => (typeof target === 'string' ? `name '${target}'` : String(target));

/** The target is not alive (or the name is not registered). */
export class NoProc extends codedError(ActorErrorCode.NoProc, (target: Ref | string) => ({
  message: `no process: ${describe(target)}`,
  fields: { target },
})) {}

/** The receiver's mailbox is at its capacity and its overflow policy is `reject`. */
export class MailboxFull extends codedError(ActorErrorCode.MailboxFull, (target: Ref, capacity: number) => ({
  message: `mailbox of ${target} is full (mailbox.capacity = ${capacity})`,
  fields: { target, capacity },
})) {}

/** No reply arrived within the call's timeout; `target` is the callee, or the name it was called by. */
export class CallTimeout extends codedError(ActorErrorCode.CallTimeout, (target: Ref | string, timeoutMs: number) => ({
  message: `call to ${target} timed out after ${timeoutMs} ms`,
  fields: { target, timeoutMs },
})) {}

/** The callee exited before replying; `reason` is its exit reason. */
export class CalleeExited extends codedError(ActorErrorCode.CalleeExited, (target: Ref, reason: ExitReason) => ({
  message: `${target} exited during the call: ${formatReason(reason)}`,
  fields: { target, reason },
  options: { cause: reason instanceof Error ? reason : undefined },
})) {}

export class NameTaken extends codedError(ActorErrorCode.NameTaken, (registeredName: string, holder: Ref) => ({
  message: `name '${registeredName}' is already registered to ${holder}`,
  fields: { registeredName, holder },
})) {}

export class AlreadyNamed extends codedError(ActorErrorCode.AlreadyNamed, (target: Ref, existingName: string) => ({
  message: `${target} is already registered as '${existingName}'`,
  fields: { target, existingName },
})) {}

/** An option is outside its allowed range; `option` names the setting (and so the cap). */
export class InvalidOption extends optionError(ActorErrorCode.InvalidOption, 'option') {}

/** An operation that only an actor's own handler may perform was called from elsewhere. */
export class NotInActor extends codedError(ActorErrorCode.NotInActor, (operation: string) => `${operation} may only be called by the actor itself, while it handles a message`) {}

export class ReceivePending extends codedError(ActorErrorCode.ReceivePending, (target: Ref) => ({
  message: `${target} is already waiting in a selective receive`,
  fields: { target },
})) {}

export class SystemStopped extends codedError(ActorErrorCode.SystemStopped, (node: string) => `actor system '${node}' has stopped`) {}

/** Wraps a non-Error value thrown by a handler, so an exit reason is always typed. */
export class ActorCrashed extends codedError(ActorErrorCode.ActorCrashed, (thrown: unknown) => ({
  message: `handler threw a non-Error value: ${safeString(thrown)}`,
  fields: { thrown },
})) {}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** OTP's `calling_self`: an actor called itself, which could only ever time out; fails at once. */
export class CallingSelf extends codedError(ActorErrorCode.CallingSelf, (target: Ref | string) => ({
  message: `${describe(target)} called itself: the call could never be answered`,
  fields: { target },
})) {}

/** `parseRef` was given text that is not `<node.id.creation>` (or is past a cap). */
export class InvalidRef extends codedError(ActorErrorCode.InvalidRef, (text: unknown, detail: string) => {
  const shown = typeof text === 'string' ? JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text) : typeof text;
  return { message: `invalid ref ${shown}: ${detail}`, fields: { text } };
}) {}

/** The system already holds `maxActors` live actors. */
export class ActorLimitReached extends codedError(ActorErrorCode.ActorLimit, (maxActors: number) => ({
  message: `cannot spawn: ${maxActors} actors are alive (maxActors = ${maxActors})`,
  fields: { maxActors },
})) {}

/** A message (or call, reply, spawn argument) that must cross a placement boundary is over the cap. */
export class PayloadTooLarge extends codedError(ActorErrorCode.PayloadTooLarge, (sizeBytes: number, limitBytes: number) => ({
  message: `payload of ${sizeBytes} bytes exceeds the placement cap (payloadLimitBytes = ${limitBytes})`,
  fields: { sizeBytes, limitBytes },
})) {}

/** A value that must cross a placement boundary cannot be encoded (a symbol, a cycle, a CallRequest). */
export class NotSerializable extends codedError(ActorErrorCode.NotSerializable, (detail: string, options?: { cause?: unknown }) => ({
  message: `cannot send across a placement boundary: ${detail}`,
  options,
})) {}

/**
 * `spawnPlaced` failed: the host could not start or died, the module or export could not be loaded,
 * or the actor's init failed. `reason` is the init's exit reason or the host's exit reason.
 */
export class PlacementFailed extends codedError(ActorErrorCode.PlacementFailed, (reason: ExitReason, detail: string) => ({
  message: `placed spawn failed: ${detail}: ${formatReason(reason)}`,
  fields: { reason },
  options: { cause: reason instanceof Error ? reason : undefined },
})) {}

/** A placement request that cannot be honoured as asked; `option` names what is wrong. */
export class InvalidPlacement extends optionError(ActorErrorCode.InvalidPlacement, 'placement') {}

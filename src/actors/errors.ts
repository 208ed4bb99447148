/**
 * Error registry of the actor kernel. Every code is stable: never renamed, never reused.
 * `docs/errors.md` documents each one; a test holds the two together.
 */
import type { ExitReason } from './exit.js';
import { formatReason } from './exit.js';
import type { Ref } from './ref.js';

/** Base of every typed error Molo throws: `code` is the contract, the message is for humans. */
export class MoloError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

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
export class NoProc extends MoloError {
  static readonly code = ActorErrorCode.NoProc;
  constructor(readonly target: Ref | string) {
    super(ActorErrorCode.NoProc, `no process: ${describe(target)}`);
  }
}

/** The receiver's mailbox is at its capacity and its overflow policy is `reject`. */
export class MailboxFull extends MoloError {
  static readonly code = ActorErrorCode.MailboxFull;
  constructor(
    readonly target: Ref,
    readonly capacity: number,
  ) {
    super(ActorErrorCode.MailboxFull, `mailbox of ${target} is full (mailbox.capacity = ${capacity})`);
  }
}

/** No reply arrived within the call's timeout. */
export class CallTimeout extends MoloError {
  static readonly code = ActorErrorCode.CallTimeout;
  constructor(
    readonly target: Ref,
    readonly timeoutMs: number,
  ) {
    super(ActorErrorCode.CallTimeout, `call to ${target} timed out after ${timeoutMs} ms`);
  }
}

/** The callee exited before replying; `reason` is its exit reason. */
export class CalleeExited extends MoloError {
  static readonly code = ActorErrorCode.CalleeExited;
  constructor(
    readonly target: Ref,
    readonly reason: ExitReason,
  ) {
    super(ActorErrorCode.CalleeExited, `${target} exited during the call: ${formatReason(reason)}`, {
      cause: reason instanceof Error ? reason : undefined,
    });
  }
}

export class NameTaken extends MoloError {
  static readonly code = ActorErrorCode.NameTaken;
  constructor(
    readonly registeredName: string,
    readonly holder: Ref,
  ) {
    super(ActorErrorCode.NameTaken, `name '${registeredName}' is already registered to ${holder}`);
  }
}

export class AlreadyNamed extends MoloError {
  static readonly code = ActorErrorCode.AlreadyNamed;
  constructor(
    readonly target: Ref,
    readonly existingName: string,
  ) {
    super(ActorErrorCode.AlreadyNamed, `${target} is already registered as '${existingName}'`);
  }
}

/** An option is outside its allowed range; `option` names the setting (and so the cap). */
export class InvalidOption extends MoloError {
  static readonly code = ActorErrorCode.InvalidOption;
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(ActorErrorCode.InvalidOption, `invalid option ${option}: ${detail}`);
  }
}

/** An operation that only an actor's own handler may perform was called from elsewhere. */
export class NotInActor extends MoloError {
  static readonly code = ActorErrorCode.NotInActor;
  constructor(operation: string) {
    super(ActorErrorCode.NotInActor, `${operation} may only be called by the actor itself, while it handles a message`);
  }
}

export class ReceivePending extends MoloError {
  static readonly code = ActorErrorCode.ReceivePending;
  constructor(readonly target: Ref) {
    super(ActorErrorCode.ReceivePending, `${target} is already waiting in a selective receive`);
  }
}

export class SystemStopped extends MoloError {
  static readonly code = ActorErrorCode.SystemStopped;
  constructor(node: string) {
    super(ActorErrorCode.SystemStopped, `actor system '${node}' has stopped`);
  }
}

/** Wraps a non-Error value thrown by a handler, so an exit reason is always typed. */
export class ActorCrashed extends MoloError {
  static readonly code = ActorErrorCode.ActorCrashed;
  constructor(readonly thrown: unknown) {
    super(ActorErrorCode.ActorCrashed, `handler threw a non-Error value: ${safeString(thrown)}`);
  }
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** OTP's `calling_self`: an actor called itself, which could only ever time out; fails at once. */
export class CallingSelf extends MoloError {
  static readonly code = ActorErrorCode.CallingSelf;
  constructor(readonly target: Ref | string) {
    super(ActorErrorCode.CallingSelf, `${describe(target)} called itself: the call could never be answered`);
  }
}

/** `parseRef` was given text that is not `<node.id.creation>` (or is past a cap). */
export class InvalidRef extends MoloError {
  static readonly code = ActorErrorCode.InvalidRef;
  constructor(
    readonly text: unknown,
    detail: string,
  ) {
    const shown = typeof text === 'string' ? JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text) : typeof text;
    super(ActorErrorCode.InvalidRef, `invalid ref ${shown}: ${detail}`);
  }
}

/** The system already holds `maxActors` live actors. */
export class ActorLimitReached extends MoloError {
  static readonly code = ActorErrorCode.ActorLimit;
  constructor(readonly maxActors: number) {
    super(ActorErrorCode.ActorLimit, `cannot spawn: ${maxActors} actors are alive (maxActors = ${maxActors})`);
  }
}

/** A message (or call, reply, spawn argument) that must cross a placement boundary is over the cap. */
export class PayloadTooLarge extends MoloError {
  static readonly code = ActorErrorCode.PayloadTooLarge;
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
  ) {
    super(
      ActorErrorCode.PayloadTooLarge,
      `payload of ${sizeBytes} bytes exceeds the placement cap (payloadLimitBytes = ${limitBytes})`,
    );
  }
}

/** A value that must cross a placement boundary cannot be encoded (a symbol, a cycle, a CallRequest). */
export class NotSerializable extends MoloError {
  static readonly code = ActorErrorCode.NotSerializable;
  constructor(detail: string, options?: { cause?: unknown }) {
    super(ActorErrorCode.NotSerializable, `cannot send across a placement boundary: ${detail}`, options);
  }
}

/**
 * `spawnPlaced` failed: the host could not start or died, the module or export could not be loaded,
 * or the actor's init failed. `reason` is the init's exit reason or the host's exit reason.
 */
export class PlacementFailed extends MoloError {
  static readonly code = ActorErrorCode.PlacementFailed;
  constructor(
    readonly reason: ExitReason,
    detail: string,
  ) {
    super(ActorErrorCode.PlacementFailed, `placed spawn failed: ${detail}: ${formatReason(reason)}`, {
      cause: reason instanceof Error ? reason : undefined,
    });
  }
}

/** A placement request that cannot be honoured as asked; `option` names what is wrong. */
export class InvalidPlacement extends MoloError {
  static readonly code = ActorErrorCode.InvalidPlacement;
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(ActorErrorCode.InvalidPlacement, `invalid placement ${option}: ${detail}`);
  }
}

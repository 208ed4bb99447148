/**
 * The base of Molo's typed errors and the one helper that defines a coded error class, so each
 * area's `errors.ts` states a code, a message and its public fields once instead of repeating the
 * class shape (`static code`, constructor, `super(code, …)`) for every code.
 */

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

/** What a coded error's arguments make: the message, the public fields set on the error, and `Error`'s options (the cause). */
export interface CodedErrorParts<Fields extends object> {
  readonly message: string;
  readonly fields?: Fields;
  /** Passed to `Error` as given: `{ cause: undefined }` still sets an own `cause`, as a hand-written `super` call did. */
  readonly options?: { cause?: unknown };
}

/** A class made by `codedError`: `new` takes the build function's arguments; `code` is static, as on a hand-written class. */
export interface CodedErrorClass<Code extends string, Args extends unknown[], Fields extends object> {
  new (...args: Args): MoloError & Readonly<Fields>;
  readonly code: Code;
  readonly prototype: MoloError;
}

/**
 * The base of one coded error class; extend it once per code so the class keeps its own name (for
 * `instanceof`, `error.name` and the registry test):
 *
 * ```ts
 * export class MailboxFull extends codedError(ActorErrorCode.MailboxFull, (target: Ref, capacity: number) => ({
 *   message: `mailbox of ${target} is full (mailbox.capacity = ${capacity})`,
 *   fields: { target, capacity },
 * })) {}
 * ```
 * `build` returns the message alone when the error has no public fields.
 */
export function codedError<const Code extends string, Args extends unknown[], Fields extends object = object>(
  code: Code,
  build: (...args: Args) => string | CodedErrorParts<Fields>,
): CodedErrorClass<Code, Args, Fields> {
  class CodedError extends MoloError {
    static readonly code = code;
    constructor(...args: Args) {
      const parts = build(...args);
      if (typeof parts === 'string') {
        super(code, parts);
      } else {
        super(code, parts.message, parts.options);
        if (parts.fields !== undefined) Object.assign(this, parts.fields);
      }
    }
  }
  // The fields are assigned at run time, so the instance type is widened here, once, by hand.
  return CodedError as unknown as CodedErrorClass<Code, Args, Fields>;
}

/**
 * The base of an "invalid option" error, the commonest shape: `option` names the setting (and so
 * the cap), the message reads `invalid <what> <option>: <detail>`.
 */
export function optionError<const Code extends string>(code: Code, what: string): CodedErrorClass<Code, [option: string, detail: string], { option: string }> {
  return codedError(code, (option: string, detail: string) => ({ message: `invalid ${what} ${option}: ${detail}`, fields: { option } }));
}

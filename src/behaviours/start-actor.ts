import { MAX_TIMEOUT_MS, type ActorBehaviour, type ActorRuntime, type ExitReason, type MailboxOptions, type Ref } from '../actors/index.js';
import { InvalidOption } from '../actors/errors.js';
import { StartFailed } from './errors.js';

/** What every behaviour's `start` passes to the kernel's spawn. */
export interface StartSpawnOptions {
  readonly name?: string;
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
  readonly trapExit?: boolean;
}

export interface StartHooks {
  /** OTP's start timeout: past it the starting actor is killed and the start fails with `timeout`. */
  readonly timeoutMs?: number | undefined;
  /** Runs right after spawn, before the actor can run (start-and-monitor takes its monitor here). */
  readonly spawned?: (ref: Ref) => void;
  /** Runs when init has settled, before the start resolves or rejects. */
  readonly settled?: (error: ExitReason | undefined) => void;
  /** True when init's stop meant OTP's `ignore`: the start then resolves with undefined. */
  readonly ignored?: () => boolean;
  /** Runs once a failed or ignored start's actor has exited, before the start settles. */
  readonly cleanup?: (ref: Ref) => void;
}

/**
 * Spawns a behaviour's actor and settles once its init has: resolves with its ref; or, once the
 * actor has exited (OTP 26's proc_lib, so its name is free again), with undefined for `ignore` or
 * a StartFailed rejection. A start timeout kills the actor (its starter is unlinked first, so it
 * sees no EXIT) and fails with the reason `timeout`.
 */
export function startActor(
  system: ActorRuntime,
  behaviour: ActorBehaviour<unknown>,
  options: StartSpawnOptions,
  hooks: StartHooks = {},
): Promise<Ref | undefined> {
  return new Promise((resolve, reject) => {
    const timeoutMs = checkStartTimeout(hooks.timeoutMs);
    let done = false;
    let timer: object | undefined;
    const afterExit = (settle: () => void): void =>
      void system.exited(ref).then(() => {
        hooks.cleanup?.(ref);
        settle();
      });
    // Spelled out rather than spread: every spread-plus-property object gets its own hidden
    // class, which made each spawn miss the kernel's inline caches (measured: half the cost of
    // a 1,000-child group restart).
    const ref: Ref = system.spawn(behaviour, {
      name: options.name,
      link: options.link,
      mailbox: options.mailbox,
      trapExit: options.trapExit,
      onStarted: (error) => {
        if (done) return;
        done = true;
        if (timer !== undefined) system.clock.clearTimer(timer);
        hooks.settled?.(error);
        if (error === undefined) resolve(ref);
        else if (hooks.ignored?.() === true) afterExit(() => resolve(undefined));
        else afterExit(() => reject(new StartFailed(error)));
      },
    });
    hooks.spawned?.(ref);
    if (timeoutMs !== undefined && !done) {
      timer = system.clock.setTimer(() => {
        if (done) return;
        done = true;
        hooks.settled?.('timeout');
        system.exit(ref, 'kill');
        afterExit(() => reject(new StartFailed('timeout')));
      }, timeoutMs);
    }
  });
}

function checkStartTimeout(timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined || checkTimeoutOrInfinity('timeoutMs', timeoutMs) === Infinity ? undefined : timeoutMs;
}

/** A behaviour's timeout option: 0..MAX_TIMEOUT_MS ms, or Infinity (OTP's infinity); else InvalidOption naming it. */
export function checkTimeoutOrInfinity(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0) || (value > MAX_TIMEOUT_MS && value !== Infinity)) {
    throw new InvalidOption(option, `must be in 0..${MAX_TIMEOUT_MS} ms or Infinity, got ${String(value)}`);
  }
  return value;
}

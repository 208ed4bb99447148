import { systemClock, type Clock } from './clock.js';
import { InvalidOption } from './errors.js';
import { unknownOptionKey } from './option-keys.js';
import type { KernelObserver } from './observer.js';
import type { LoggerOption } from '../telemetry/logger.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, MAX_PAYLOAD_LIMIT_BYTES } from './placement/limits.js';

export interface ActorSystemOptions {
  /** This node's name, carried by every ref; default `local`. */
  readonly node?: string;
  /** Distinguishes incarnations of a node; default random. */
  readonly creation?: number;
  readonly clock?: Clock;
  /** Live actors at most; default {@link DEFAULT_MAX_ACTORS}, cap {@link MAX_ACTORS_CAP}. */
  readonly maxActors?: number;
  /** Callbacks one actor runs before the next ready actor gets its turn; default 1,024. */
  readonly batch?: number;
  /** Callbacks run before yielding to the event loop; default 16,384. */
  readonly budget?: number;
  /** Default timeout of `call`; default 5,000 ms. */
  readonly callTimeoutMs?: number;
  /** Lifecycle hooks for telemetry; absent means no cost. */
  readonly observer?: KernelObserver;
  /**
   * Root of every actor's `ctx.log` (a child bound with the actor's ref, name and behaviour), and
   * where crash reports (`actor.crashed`) and supervisor reports go when no observer takes them: a
   * pino logger, options for a new one (`{ level: 'debug' }`), or `false` for none. Default: the
   * process's default logger, JSON lines on stderr at `$MOLO_LOG_LEVEL`, else `info`.
   */
  readonly logger?: LoggerOption;
  /**
   * Cap on one encoded frame crossing a placement boundary (a message, call, reply or spawn
   * argument); default 1 MiB, at most 64 MiB. Over it, `send`/`call` fail with PayloadTooLarge.
   */
  readonly payloadLimitBytes?: number;
}

const SYSTEM_OPTION_KEYS: readonly (keyof ActorSystemOptions)[] = [
  'node', 'creation', 'clock', 'maxActors', 'batch', 'budget', 'callTimeoutMs', 'observer', 'logger', 'payloadLimitBytes',
];

export const DEFAULT_MAX_ACTORS = 4_194_304;
export const MAX_ACTORS_CAP = 134_217_727;
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;
/** The largest delay a native timer supports. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The options with every default applied and every value checked. */
export interface ResolvedSystemOptions {
  readonly node: string;
  readonly creation: number;
  readonly clock: Clock;
  readonly maxActors: number;
  readonly batch: number;
  readonly budget: number;
  readonly callTimeoutMs: number;
  readonly payloadLimitBytes: number;
}

/** Applies the defaults and checks each option (InvalidOption names the first one out of range). */
export function resolveSystemOptions(options: ActorSystemOptions): ResolvedSystemOptions {
  const unknown = unknownOptionKey(options, SYSTEM_OPTION_KEYS);
  if (unknown !== undefined) throw new InvalidOption(unknown.key, unknown.detail);
  return {
    node: options.node ?? 'local',
    creation: options.creation ?? 1 + Math.floor(Math.random() * 0x7fff_fffe),
    clock: options.clock ?? systemClock,
    maxActors: checkInteger('maxActors', options.maxActors ?? DEFAULT_MAX_ACTORS, 1, MAX_ACTORS_CAP),
    batch: checkInteger('batch', options.batch ?? 1_024, 1, 1_000_000),
    budget: checkInteger('budget', options.budget ?? 16_384, 1, 10_000_000),
    callTimeoutMs: checkTimeout('callTimeoutMs', options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS),
    payloadLimitBytes: checkInteger(
      'payloadLimitBytes',
      options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES,
      1,
      MAX_PAYLOAD_LIMIT_BYTES,
    ),
  };
}

function checkInteger(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOption(option, `must be an integer in ${min}..${max}, got ${value}`);
  }
  return value;
}

/** A delay a native timer can hold: `call` checks each caller's timeout with it too. */
export function checkTimeout(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0) || value > MAX_TIMEOUT_MS) {
    throw new InvalidOption(option, `must be in 0..${MAX_TIMEOUT_MS} ms, got ${value}`);
  }
  return value;
}

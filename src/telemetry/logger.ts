import type { DestinationStream, LoggerOptions as PinoOptions } from 'pino';
import { pinoModule } from './lazy-modules.js';
import type { Logger, LogLevel } from './logger-api.js';

export type { LogFn, Logger, LogLevel } from './logger-api.js';
export { silentLogger } from './logger-api.js';

/** Where the root logger writes. */
export type LogDestination =
  /** A file path; the file is appended to (and its directory created). */
  | string
  /** A file descriptor: 1 is stdout, 2 is stderr. */
  | number
  /** Any stream with `write(line)`: a socket, a `PassThrough`, a test's collector. */
  | DestinationStream;

export interface LoggerOptions {
  /** Lowest level written; default `info`. `silent` writes nothing. */
  readonly level?: LogLevel | 'silent';
  /** Default stdout. */
  readonly destination?: LogDestination;
  /** Bound as `name` on every line. */
  readonly name?: string;
  /**
   * For a path or a file descriptor: write synchronously, so every line is out before `log` returns.
   * Default true for a descriptor (as pino's stdout), false for a path: lines are buffered and
   * written in the background, so call `flush()` on the returned logger before exiting.
   */
  readonly sync?: boolean;
  /** Paths redacted from every line (pino's `redact`), e.g. `['password', '*.secret']`. */
  readonly redact?: readonly string[];
}

/**
 * The root logger: pino writing one JSON object per line, with `level` (numeric), `time` (epoch
 * ms), `pid`, `hostname`, the bound fields and `msg`.
 */
export function createLogger(options: LoggerOptions = {}): Logger & { flush(): void; level: string } {
  const pinoOptions: PinoOptions = { level: options.level ?? 'info' };
  if (options.name !== undefined) pinoOptions.name = options.name;
  if (options.redact !== undefined) pinoOptions.redact = [...options.redact];
  return pinoModule().pino(pinoOptions, toStream(options.destination ?? 1, options.sync));
}

function toStream(destination: LogDestination, sync: boolean | undefined): DestinationStream {
  if (typeof destination === 'number') return pinoModule().destination({ dest: destination, sync: sync ?? true });
  if (typeof destination === 'string') {
    return pinoModule().destination({ dest: destination, sync: sync ?? false, mkdir: true, append: true });
  }
  return destination;
}

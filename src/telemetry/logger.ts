import { isatty } from 'node:tty';
import type { DestinationStream, LoggerOptions as PinoOptions } from 'pino';
import { pinoModule, pinoPrettyModule } from './lazy-modules.js';
import type { Logger, LogLevel } from './logger-api.js';

export type { LogFn, Logger, LogLevel } from './logger-api.js';
export { silentLogger } from './logger-api.js';
import { silentLogger } from './logger-api.js';

/** Where the root logger writes. */
export type LogDestination =
  /** A file path; the file is appended to (and its directory created). */
  | string
  /** A file descriptor: 1 is stdout, 2 is stderr. */
  | number
  /** Any stream with `write(line)`: a socket, a `PassThrough`, a test's collector. */
  | DestinationStream;

export interface LoggerOptions {
  /** Lowest level written; default `$MOLO_LOG_LEVEL`, else `info`. `silent` writes nothing. */
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
  /**
   * `json` (default): one JSON object per line. `pretty`: pino-pretty's human-readable lines
   * (colored when the destination is a terminal), for development only: they are not parsed back.
   */
  readonly format?: LogFormat;
}

/** How lines are written: JSON for machines, or pretty for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The root logger: pino writing one JSON object per line, with `level` (numeric), `time` (epoch
 * ms), `pid`, `hostname`, the bound fields and `msg`.
 */
export function createLogger(options: LoggerOptions = {}): Logger & { flush(): void; level: string } {
  const pinoOptions: PinoOptions = { level: options.level ?? envLogLevel() ?? 'info' };
  if (options.name !== undefined) pinoOptions.name = options.name;
  if (options.redact !== undefined) pinoOptions.redact = [...options.redact];
  const destination = options.destination ?? 1;
  if (options.format !== undefined && options.format !== 'json' && options.format !== 'pretty') {
    throw new RangeError(`logger format must be json or pretty, got '${String(options.format)}'`);
  }
  const stream = options.format === 'pretty' ? prettyStream(destination, options.sync) : toStream(destination, options.sync);
  return pinoModule().pino(pinoOptions, stream);
}

/** pino-pretty in this thread (not as a transport worker): a development logger needs no extra thread. */
function prettyStream(destination: LogDestination, sync: boolean | undefined): DestinationStream {
  return pinoPrettyModule()({
    destination,
    sync: sync ?? typeof destination === 'number',
    mkdir: typeof destination === 'string',
    append: true,
    colorize: typeof destination === 'number' && isatty(destination),
    ignore: 'pid,hostname',
  });
}

/** The environment variable that forces the default logger's format (`json` or `pretty`). */
export const LOG_FORMAT_ENV = 'MOLO_LOG_FORMAT';

/**
 * The default logger's format: `$MOLO_LOG_FORMAT` when set, else `pretty` when a person is
 * watching (the destination is a terminal) and the level is one a developer reads (`debug` or
 * `info`), else `json`, so a pipe, a file, a container's log collector and a quiet production
 * level all get machine-readable lines.
 */
export function chooseLogFormat(input: { readonly isTTY: boolean; readonly level: LogLevel | 'silent'; readonly env?: Readonly<Record<string, string | undefined>> }): LogFormat {
  const forced = (input.env ?? process.env)[LOG_FORMAT_ENV]?.trim().toLowerCase();
  if (forced !== undefined && forced !== '') {
    if (forced !== 'json' && forced !== 'pretty') throw new RangeError(`${LOG_FORMAT_ENV} must be json or pretty, got '${forced}'`);
    return forced;
  }
  return input.isTTY && (input.level === 'debug' || input.level === 'info') ? 'pretty' : 'json';
}

function toStream(destination: LogDestination, sync: boolean | undefined): DestinationStream {
  if (typeof destination === 'number') return pinoModule().destination({ dest: destination, sync: sync ?? true });
  if (typeof destination === 'string') {
    return pinoModule().destination({ dest: destination, sync: sync ?? false, mkdir: true, append: true });
  }
  return destination;
}

/** The environment variable that sets the level of loggers made without one. */
export const LOG_LEVEL_ENV = 'MOLO_LOG_LEVEL';
const LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** `$MOLO_LOG_LEVEL`, checked; undefined when unset or empty. */
export function envLogLevel(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel | 'silent' | undefined {
  const value = env[LOG_LEVEL_ENV]?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (!LEVELS.includes(value)) throw new RangeError(`${LOG_LEVEL_ENV} must be one of ${LEVELS.join(', ')}, got '${value}'`);
  return value as LogLevel | 'silent';
}

let processLogger: Logger | undefined;

/**
 * The logger of everything given none: one pino root logger per process, writing to stderr
 * (stdout stays the program's) at `$MOLO_LOG_LEVEL`, else `info`; JSON lines, or pretty ones on a
 * terminal at debug or info ({@link chooseLogFormat}). Made on first use, so a program that passes
 * its own logger never loads pino for this.
 */
export function defaultLogger(): Logger {
  if (processLogger !== undefined) return processLogger;
  const level = envLogLevel() ?? 'info';
  return (processLogger = createLogger({ destination: 2, level, format: chooseLogFormat({ isTTY: isatty(2), level }) }));
}

/** A logger option as every Molo entry point takes it: a pino logger, options for a new one, `false` for none, or absent for {@link defaultLogger}. */
export type LoggerOption = Logger | LoggerOptions | false;

export function resolveLogger(option: LoggerOption | undefined): Logger {
  if (option === false) return silentLogger;
  if (option === undefined) return defaultLogger();
  return isLogger(option) ? option : createLogger(option);
}

function isLogger(option: Logger | LoggerOptions): option is Logger {
  return typeof (option as Logger).child === 'function' && typeof (option as Logger).error === 'function';
}

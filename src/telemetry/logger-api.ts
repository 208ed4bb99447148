/**
 * The logger every layer writes through. It is the shape of a pino logger, stated structurally so
 * that the kernel depends on this small interface and not on pino: any pino logger (root or child)
 * is one, and so is {@link silentLogger}.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface LogFn {
  /** Logs `fields` as JSON properties of the line, with an optional message (`msg`). */
  (fields: object, message?: string): void;
  (message: string): void;
}

export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger whose every line also carries `bindings`. */
  child(bindings: Record<string, unknown>): Logger;
  isLevelEnabled(level: string): boolean;
}

const ignore = (): void => {};

/** Drops everything; what `ctx.log` is when the system has no logger. */
export const silentLogger: Logger = Object.freeze({
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  fatal: ignore,
  child: (): Logger => silentLogger,
  isLevelEnabled: (): boolean => false,
});

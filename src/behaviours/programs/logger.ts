/**
 * The part of a pino logger that program supervision writes through (`logger.info(fields, msg)`).
 * Any pino logger is one; the default is the system's logger.
 */
export interface ProgramLogger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  child?(bindings: Record<string, unknown>): ProgramLogger;
}

type Level = 'info' | 'warn' | 'error';
/** pino's numeric levels, so tools that read pino output read these lines too. */
const LEVEL_NUMBER: Readonly<Record<Level, number>> = { info: 30, warn: 40, error: 50 };

/**
 * @deprecated A minimal pino-compatible logger: JSON lines (`level`, `time`, bindings, fields,
 * `msg`) on `stream`. Pass a pino logger (`createLogger`) instead; kept for existing callers.
 */
export function jsonLineLogger(
  stream: { write(chunk: string): unknown } = process.stderr,
  bindings: Readonly<Record<string, unknown>> = {},
): ProgramLogger {
  const write = (level: Level, fields: object, message?: string): void => {
    let line: string;
    try {
      line = JSON.stringify({ level: LEVEL_NUMBER[level], time: Date.now(), ...bindings, ...fields, msg: message });
    } catch {
      line = JSON.stringify({ level: LEVEL_NUMBER[level], time: Date.now(), ...bindings, msg: message });
    }
    stream.write(`${line}\n`);
  };
  return {
    info: (fields, message) => write('info', fields, message),
    warn: (fields, message) => write('warn', fields, message),
    error: (fields, message) => write('error', fields, message),
    child: (more) => jsonLineLogger(stream, { ...bindings, ...more }),
  };
}

/** `logger.child(bindings)` where the logger has one; otherwise a wrapper adding the bindings to every call. */
export function childLogger(logger: ProgramLogger, bindings: Record<string, unknown>): ProgramLogger {
  if (typeof logger.child === 'function') return logger.child(bindings);
  return {
    info: (fields, message) => logger.info({ ...bindings, ...fields }, message),
    warn: (fields, message) => logger.warn({ ...bindings, ...fields }, message),
    error: (fields, message) => logger.error({ ...bindings, ...fields }, message),
    child: (more) => childLogger(logger, { ...bindings, ...more }),
  };
}

/** Runs a logger call without letting a broken logger crash the supervisor. */
export function safeLog(logger: ProgramLogger, level: Level, fields: object, message: string): void {
  try {
    logger[level](fields, message);
  } catch {
    // A logger that throws loses this line; supervision goes on.
  }
}

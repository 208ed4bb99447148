/**
 * The one text of an exit reason, shared by the kernel's `formatReason` and telemetry (which may
 * not import the kernel). Every error, at the top or nested anywhere inside a reason, shows its
 * name, its `code` when it has one, and its message: `JSON.stringify` alone would print `{}`.
 */
export function describeReason(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return describeError(reason);
  if (typeof reason === 'object' && reason !== null && 'shutdown' in reason) {
    return `{shutdown, ${describeValue((reason as { shutdown: unknown }).shutdown)}}`;
  }
  return describeValue(reason);
}

/** `Name [CODE]: message`, or `Name: message` for an error without a code. */
export function describeError(error: Error): string {
  const code = errorCode(error);
  return code === undefined ? `${error.name}: ${error.message}` : `${error.name} [${code}]: ${error.message}`;
}

/** A value as JSON, with errors as `{name, code, message, cause}` objects; never throws. */
export function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value, errorReplacer) ?? String(value);
  } catch {
    // A cycle: fall back to the errors' text where there is one.
    return value instanceof Error ? describeError(value) : String(value);
  }
}

/** The JSON form of an error inside a reason: what a reader needs to know why. */
export function errorFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: error.name };
  const code = errorCode(error);
  if (code !== undefined) fields.code = code;
  fields.message = error.message;
  if (error.cause !== undefined) fields.cause = error.cause;
  return fields;
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return errorFields(value);
  if (typeof value === 'bigint') return `${value}n`;
  return value;
}

function errorCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

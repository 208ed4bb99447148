/**
 * Classes that cross placement boundaries as themselves rather than as plain objects (GenServer's
 * cast and stop envelopes). Registering one costs nothing until a frame is encoded: the wire codec
 * (and msgpackr) load only when something is placed.
 */
export interface WireClass<T extends object = object> {
  readonly Class: abstract new (...args: never[]) => T;
  /** msgpackr extension type, unique, in 0x50..0x5f. */
  readonly type: number;
  write(value: T): unknown;
  read(data: unknown): T;
}

export const FIRST_WIRE_CLASS_TYPE = 0x50;
export const LAST_WIRE_CLASS_TYPE = 0x5f;

const classes = new Map<number, WireClass>();
let sink: ((definition: WireClass) => void) | undefined;

/** Both sides must register the class, which they do by importing the module that defines it. */
export function registerWireClass<T extends object>(definition: WireClass<T>): void {
  const type = definition.type;
  if (!Number.isInteger(type) || type < FIRST_WIRE_CLASS_TYPE || type > LAST_WIRE_CLASS_TYPE) {
    throw new RangeError(`wire class type must be in ${FIRST_WIRE_CLASS_TYPE}..${LAST_WIRE_CLASS_TYPE}, got ${type}`);
  }
  const known = classes.get(type);
  if (known !== undefined) {
    if (known.Class === definition.Class) return;
    throw new RangeError(`wire class type ${type} is taken by ${known.Class.name}`);
  }
  classes.set(type, definition as unknown as WireClass);
  sink?.(definition as unknown as WireClass);
}

/** The codec takes every class registered so far, and each one registered later. */
export function receiveWireClasses(into: (definition: WireClass) => void): void {
  sink = into;
  for (const definition of classes.values()) into(definition);
}

/**
 * The address of an actor: node, local id and the creation number of the system that spawned it.
 * Ids are never reused within a creation, and a restarted actor gets a new id, so a stale ref can
 * never reach its successor.
 */
export class Ref {
  /** @internal Direct route to a live local actor; cleared at exit. */
  _cell: object | undefined = undefined;

  constructor(
    readonly node: string,
    readonly id: number,
    readonly creation: number,
  ) {}

  equals(other: Ref): boolean {
    return this.id === other.id && this.node === other.node && this.creation === other.creation;
  }

  toString(): string {
    return `<${this.node}.${this.id}.${this.creation}>`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Ref${this.toString()}`;
  }
}

/** A monitor's handle, carried by the `DOWN` message it produces. */
export type MonitorRef = number;

/**
 * The address of an actor: node, local id and the creation number of the system that spawned it.
 * Ids are never reused within a creation, and a restarted actor gets a new id, so a stale ref can
 * never reach its successor.
 *
 * A ref is its parts: any object with the same (node, id, creation), rebuilt with this constructor
 * or `parseRef`, names the same actor for every operation. Compare refs with {@link Ref.equals}.
 */
export class Ref {
  /**
   * @internal Direct route to a live local actor, on the ref spawn returned only; cleared at exit.
   * Other objects with the same parts reach the actor through one lookup by id.
   */
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

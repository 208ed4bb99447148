import type { ActorCell } from './actor-cell.js';
import { CellFlag } from './cell-flags.js';
import { AlreadyNamed, InvalidOption, NameTaken, NoProc } from './errors.js';
import type { Ref } from './ref.js';
import type { Router } from './placement/router.js';

const { EXITED } = CellFlag;

/** Where the registry finds the router, which knows the names held in placement hosts. */
export interface RegistryHost {
  readonly router: Router | undefined;
}

/**
 * The system's names: each names one live local actor, and an actor holds at most one. Names taken
 * in placement hosts are the router's; a name is free only when neither side holds it, and every
 * local change is told to the router so the whole node sees one registry.
 */
export class NameRegistry {
  readonly #names = new Map<string, ActorCell>();

  constructor(readonly host: RegistryHost) {}

  /** The local actor registered as `name`. */
  cellOf(name: string): ActorCell | undefined {
    return this.#names.get(name);
  }

  /** Throws unless `name` is a valid name that no actor of the node holds. */
  checkFree(name: string): void {
    if (typeof name !== 'string' || name.length === 0) throw new InvalidOption('name', 'must be a non-empty string');
    const holder = this.#names.get(name);
    if (holder !== undefined) throw new NameTaken(name, holder.self);
    const elsewhere = this.host.router?.whereis(name);
    if (elsewhere !== undefined) throw new NameTaken(name, elsewhere);
  }

  register(name: string, cell: ActorCell): void {
    // An exited actor's name would never be freed.
    if (cell.flags & EXITED) throw new NoProc(cell.self);
    this.checkFree(name);
    if (cell.name !== undefined) throw new AlreadyNamed(cell.self, cell.name);
    this.#names.set(name, cell);
    cell.name = name;
    this.host.router?.registered(name, cell.self);
  }

  unregister(name: string): boolean {
    const cell = this.#names.get(name);
    if (cell === undefined) return false;
    this.#names.delete(name);
    cell.name = undefined;
    this.host.router?.unregistered(name, cell.self);
    return true;
  }

  /** `cell` exited: its name, if it still holds it, is free again. */
  release(cell: ActorCell): void {
    const name = cell.name;
    if (name === undefined || this.#names.get(name) !== cell) return;
    this.#names.delete(name);
    this.host.router?.unregistered(name, cell.self);
  }

  whereis(name: string): Ref | undefined {
    return this.#names.get(name)?.self ?? this.host.router?.whereis(name);
  }

  /** Names held by local actors. */
  names(): string[] {
    return [...this.#names.keys()];
  }
}

import { Ref } from '../ref.js';

const keyOf = (node: string, id: number, creation: number): string => `${creation}.${id}@${node}`;

/**
 * A table of canonical refs. A ref decoded from a frame is replaced by the one object already
 * standing for that actor here, so refs keep their identity across boundaries: a link set or a
 * monitor map keyed by a ref finds it again when the same ref comes back in another frame, and a
 * ref to a live local actor decodes to the object that routes straight to its cell.
 *
 * A process has one table for placement (its system and hosts are one node). A node keeps a table
 * of its own: several nodes may share a process (tests do), and a ref decoded by one must never be
 * another system's live object, whose cell would take the message past the link.
 *
 * Entries are weak: the table never keeps a ref (or the cell it points to) alive.
 */
export class RefTable {
  readonly #table = new Map<string, WeakRef<Ref>>();
  readonly #finalizer = new FinalizationRegistry<string>((key) => {
    const entry = this.#table.get(key);
    if (entry !== undefined && entry.deref() === undefined) this.#table.delete(key);
  });
  /**
   * Refs this table holds as canonical: a ref that travels often is found without building its
   * key (the hot path of remote sends, one lookup per frame each way).
   */
  readonly #canonical = new WeakSet<Ref>();
  /** The last ref interned: a stream of frames for one actor decodes without a key either. */
  #last: Ref | undefined = undefined;

  /** The canonical ref for (node, id, creation), made on first sight. */
  intern(node: string, id: number, creation: number): Ref {
    const last = this.#last;
    if (last !== undefined && last.id === id && last.creation === creation && last.node === node && this.#canonical.has(last)) return last;
    const key = keyOf(node, id, creation);
    let ref = this.#table.get(key)?.deref();
    if (ref === undefined) {
      ref = new Ref(node, id, creation);
      this.#table.set(key, new WeakRef(ref));
      this.#finalizer.register(ref, key);
      this.#canonical.add(ref);
    }
    this.#last = ref;
    return ref;
  }

  /**
   * Records a ref that is about to leave this system, so that it decodes to itself when it comes
   * back. A live local ref (one with a cell) always wins over a copy made earlier.
   */
  remember(ref: Ref): void {
    if (this.#canonical.has(ref)) return;
    const key = keyOf(ref.node, ref.id, ref.creation);
    const known = this.#table.get(key)?.deref();
    if (known === ref) return;
    if (known !== undefined && (known._cell !== undefined || ref._cell === undefined)) return;
    if (known !== undefined) this.#canonical.delete(known);
    this.#table.set(key, new WeakRef(ref));
    this.#finalizer.register(ref, key);
    this.#canonical.add(ref);
  }

  /**
   * The object standing for `ref` in this table: `ref` itself unless the table already holds
   * another (see {@link remember}). Bookkeeping keyed by refs that pass between two tables (a
   * node's and placement's) keys by this, so a ref decoded later from either side finds it.
   */
  canonical(ref: Ref): Ref {
    this.remember(ref);
    return this.intern(ref.node, ref.id, ref.creation);
  }

  /**
   * The object this table holds for `ref`'s parts, or `ref` itself when it holds none: a lookup
   * that changes nothing, for bookkeeping keyed by canonical refs (who is known dead, mailboxes).
   */
  find(ref: Ref): Ref {
    if (this.#canonical.has(ref)) return ref;
    return this.#table.get(keyOf(ref.node, ref.id, ref.creation))?.deref() ?? ref;
  }

  /** Entries in the table (some may already be collected); for tests. */
  get size(): number {
    return this.#table.size;
  }
}

/** The process's table: placement's. */
export const processRefs = new RefTable();

/** The canonical ref for (node, id, creation) in the process's table. */
export function internRef(node: string, id: number, creation: number): Ref {
  return processRefs.intern(node, id, creation);
}

/** Records a ref leaving this process's system (see {@link RefTable.remember}). */
export function rememberRef(ref: Ref): void {
  processRefs.remember(ref);
}

/** Entries in the process's table (some may already be collected); for tests. */
export function internedRefCount(): number {
  return processRefs.size;
}

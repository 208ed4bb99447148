import { Ref } from '../ref.js';

/**
 * The process-wide table of canonical refs. A ref decoded from a frame is replaced by the one object
 * already standing for that actor here, so refs keep their identity across boundaries: a link set
 * or a monitor map keyed by a ref finds it again when the same ref comes back in another frame, and
 * a ref to a live local actor decodes to the object that routes straight to its cell.
 *
 * Entries are weak: the table never keeps a ref (or the cell it points to) alive.
 */
const table = new Map<string, WeakRef<Ref>>();
const finalizer = new FinalizationRegistry<string>((key) => {
  const entry = table.get(key);
  if (entry !== undefined && entry.deref() === undefined) table.delete(key);
});

const keyOf = (node: string, id: number, creation: number): string => `${creation}.${id}@${node}`;

/** The canonical ref for (node, id, creation), made on first sight. */
export function internRef(node: string, id: number, creation: number): Ref {
  const key = keyOf(node, id, creation);
  const known = table.get(key)?.deref();
  if (known !== undefined) return known;
  const ref = new Ref(node, id, creation);
  table.set(key, new WeakRef(ref));
  finalizer.register(ref, key);
  return ref;
}

/**
 * Records a ref that is about to leave this system, so that it decodes to itself when it comes
 * back. A live local ref (one with a cell) always wins over a copy made earlier.
 */
export function rememberRef(ref: Ref): void {
  const key = keyOf(ref.node, ref.id, ref.creation);
  const known = table.get(key)?.deref();
  if (known === ref) return;
  if (known !== undefined && (known._cell !== undefined || ref._cell === undefined)) return;
  table.set(key, new WeakRef(ref));
  finalizer.register(ref, key);
}

/** Entries in the table (some may already be collected); for tests. */
export function internedRefCount(): number {
  return table.size;
}

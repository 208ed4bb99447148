/**
 * Which database's transaction callback the current async call chain is inside, so that a write on
 * the database itself there (rather than on the callback's `tx`) is refused the same way on both
 * backends, instead of committing on its own (Postgres) or waiting for the writer its own
 * transaction holds until AcquireTimeout (SQLite). See OutsideTransaction.
 *
 * This is the one piece of ambient state in the data layer, and it only ever refuses: it never
 * picks a connection (context.ts explains why statements take their context as an argument).
 *
 * An enabled AsyncLocalStorage turns on Node's promise hooks, which then run for every promise in
 * the process (measured: a third more CPU per SQLite statement, more for code that makes more
 * promises). So the storage is enabled only while some transaction callback is live, and disabled
 * again when the last one settles: outside transactions no statement pays for it. A store then
 * reads as none, which is what a settled callback's scope means anyway (`active` is false).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { OutsideTransaction } from './errors.js';

interface Scope {
  readonly owner: object;
  /** False once the callback settled: timers and promises it left behind may write freely. */
  active: boolean;
  readonly parent: Scope | undefined;
}

const scopes = new AsyncLocalStorage<Scope>();
/** Transaction callbacks running now, in every database: the storage is enabled while this is above 0. */
let live = 0;

/** Runs `fn` (a transaction's callback) as inside `owner`'s transaction. */
export async function inTransactionOf<T>(owner: object, fn: () => Promise<T>): Promise<T> {
  const scope: Scope = { owner, active: true, parent: live === 0 ? undefined : scopes.getStore() };
  live++;
  try {
    return await scopes.run(scope, fn);
  } finally {
    scope.active = false;
    // The last live callback settled: no chain can be inside one now, so stop the promise hooks.
    if (--live === 0) scopes.disable();
  }
}

/** Whether the caller runs inside a live transaction callback of `owner`. */
export function insideTransactionOf(owner: object): boolean {
  if (live === 0) return false;
  for (let scope = scopes.getStore(); scope !== undefined; scope = scope.parent) {
    if (scope.active && scope.owner === owner) return true;
  }
  return false;
}

/** OutsideTransaction when the caller is inside a live transaction callback of `owner` and `writes()` says the statement writes. */
export function refusedInOwnTransaction(owner: object, what: string, writes: () => boolean = () => true): OutsideTransaction | undefined {
  return insideTransactionOf(owner) && writes() ? new OutsideTransaction(what) : undefined;
}

/** Runs `fn` as outside any transaction callback: a write on the database that deliberately does not belong to the transaction. */
export function outsideTransaction<T>(fn: () => T): T {
  return live === 0 ? fn() : scopes.exit(fn);
}

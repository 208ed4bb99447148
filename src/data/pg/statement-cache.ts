/**
 * The connection's prepared-statement cache: a bounded LRU keyed by SQL text. A text seen once runs
 * as the unnamed statement; on its second use it is prepared under a name (`molo_s<n>`) and later
 * uses only Bind and Execute it, in binary when every column has a binary decoder. Entries pushed
 * out are handed back so the connection can Close them on the server.
 */
import type { DatabaseError } from 'pg-protocol/dist/messages.js';
import type { ColumnDesc, ResultShape } from './result-shape.js';

export const StatementState = {
  /** Seen, not prepared: runs as the unnamed statement. */
  Unprepared: 0,
  /** Parse and Describe written, their answer not read yet. */
  Preparing: 1,
  /** Described: parameter types and columns known. */
  Ready: 2,
  /** Its Parse failed; dropped from the cache. */
  Failed: 3,
} as const;
export type StatementState = (typeof StatementState)[keyof typeof StatementState];

export class Statement {
  name: string | null = null;
  state: StatementState = StatementState.Unprepared;
  uses = 0;
  paramOids: readonly number[] | null = null;
  columns: readonly ColumnDesc[] | null = null;
  /** Decoding shapes, built once per format. */
  textShape: ResultShape | null = null;
  binaryShape: ResultShape | null = null;
  /** Every column has a binary decoder: results are asked for in binary. */
  binary = false;
  /** Why its Parse failed: given to pipelined uses that then find no statement (26000). */
  failure: DatabaseError | null = null;

  constructor(readonly sql: string) {}
}

export class StatementCache {
  readonly #entries = new Map<string, Statement>();
  #counter = 0;
  #last: Statement | null = null;
  /** Prepared statements pushed out and not yet closed on the server. */
  readonly evicted: Statement[] = [];

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `sql`, now the most recently used; counts this use. Capacity 0: a fresh, uncached entry. */
  use(sql: string): Statement {
    if (this.capacity === 0) {
      const once = new Statement(sql);
      once.uses = 1;
      return once;
    }
    const last = this.#last;
    if (last !== null && last.sql === sql) {
      last.uses++;
      return last;
    }
    let entry = this.#entries.get(sql);
    if (entry === undefined) {
      entry = new Statement(sql);
      if (this.#entries.size >= this.capacity) this.#evictOldest();
    } else this.#entries.delete(sql);
    this.#entries.set(sql, entry);
    entry.uses++;
    this.#last = entry;
    return entry;
  }

  /** The entry for `sql`, if cached, without counting a use. */
  peek(sql: string): Statement | undefined {
    return this.#entries.get(sql);
  }

  /** Gives the entry a server-side name: it is about to be prepared. */
  nameFor(entry: Statement): string {
    entry.name = `molo_s${++this.#counter}`;
    entry.state = StatementState.Preparing;
    return entry.name;
  }

  /** Removes an entry (failed, invalidated, or closed by the caller); a named one is queued for Close. */
  drop(entry: Statement, close: boolean): void {
    if (this.#entries.get(entry.sql) === entry) this.#entries.delete(entry.sql);
    if (this.#last === entry) this.#last = null;
    if (close && entry.name !== null && entry.state !== StatementState.Failed) this.evicted.push(entry);
  }

  #evictOldest(): void {
    const oldest = this.#entries.values().next().value as Statement;
    this.drop(oldest, true);
  }

  /** Forgets everything without closing (the server session is gone). */
  clear(): void {
    this.#entries.clear();
    this.#last = null;
    this.evicted.length = 0;
  }
}

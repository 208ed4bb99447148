/**
 * The four workloads of the orm suite, and what every implementation provides for them. The
 * expected checksums are computed from the dataset, so a run that skips work or reads wrong rows
 * fails instead of looking fast.
 */
import type { Dataset } from './schema.js';

export const PAGE_SIZE = 100;

/** One implementation, opened on one backend. */
export interface OrmWork {
  /** Empties `ins_posts`, and on SQLite checkpoints the WAL to empty (untimed). */
  resetInsert(): Promise<void>;
  /** Inserts `n` rows into ins_posts in one transaction, each returned; resolves with the count. */
  insert(n: number): Promise<number>;
  /** `n` selects of posts by primary key (ids from `idAt`), all issued at once; the sum of the ids read. */
  selectByKey(n: number, idAt: (i: number) => number): Promise<number>;
  /**
   * `n` keyset pages of 100 posts of active authors joined with the author's name, walked one
   * after the other (restarting from the first page after a short one); the number of rows read.
   */
  pages(n: number): Promise<number>;
  /** `n` eager loads of authors 1..parents with posts and their comments; the comments loaded. */
  eager(n: number, parents: number): Promise<number>;
  /** `n` single-row inserts into ins_posts, each awaited before the next (autocommit), each returned; the count. */
  insertAwaited(n: number): Promise<number>;
  /** `n` selects of posts by primary key, each awaited before the next; the sum of the ids read. */
  selectByKeyAwaited(n: number, idAt: (i: number) => number): Promise<number>;
  /** `n` rows into ins_posts through the implementation's bulk API (one call), each returned; the count. */
  bulkInsert(n: number): Promise<number>;
  close(): Promise<void>;
}

/** Rows 0..n-1 of the insert case. */
export function insertRows(n: number, authors: number): { author_id: number; title: string; score: number }[] {
  return Array.from({ length: n }, (_, i) => insertRow(i, authors));
}

/** The n-th row of the insert case. */
export function insertRow(i: number, authors: number): { author_id: number; title: string; score: number } {
  return { author_id: (i % authors) + 1, title: `ins-${i}`, score: i % 100 };
}

/** Posts of active (odd-numbered) authors. */
export function activePosts(data: Dataset): number {
  const total = data.authors * data.postsPerAuthor;
  // Post g belongs to author ((g - 1) % authors) + 1.
  let active = 0;
  for (let g = 1; g <= total; g++) if ((((g - 1) % data.authors) + 1) % 2 === 1) active++;
  return active;
}

/** Rows `n` page reads return: full pages, then the short last one, then from the start again. */
export function expectedPageRows(n: number, data: Dataset): number {
  const active = activePosts(data);
  const cycle = Math.floor(active / PAGE_SIZE) + 1;
  let rows = 0;
  for (let i = 0; i < n; i++) rows += i % cycle === cycle - 1 ? active % PAGE_SIZE : PAGE_SIZE;
  return rows;
}

/** Comments loaded by one eager load over authors 1..parents. */
export function expectedEagerComments(data: Dataset, parents: number): number {
  const posts = data.authors * data.postsPerAuthor;
  const comments = posts * data.commentsPerPost;
  let count = 0;
  // Comment c belongs to post ((c - 1) % posts) + 1, which belongs to author ((p - 1) % authors) + 1.
  for (let c = 1; c <= comments; c++) {
    const post = ((c - 1) % posts) + 1;
    if (((post - 1) % data.authors) + 1 <= parents) count++;
  }
  return count;
}

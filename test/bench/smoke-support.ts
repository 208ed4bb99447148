/**
 * What the benchmark smoke tests share: the repository root, the runner, the row shape of
 * `bench/results/<suite>.json`, and keeping a full run's results file across `npm test`.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const run = promisify(execFile);

export interface ResultRow {
  case: string;
  impl: string;
  ops_per_s: number | null;
  [extra: string]: unknown;
}

/**
 * The smoke run rewrites `bench/results/<suite>.json`: this saves the file before the test file's
 * tests and puts it back (or removes the smoke run's) after them. Returns the file's path.
 */
export function keepResults(suite: string): string {
  const results = join(ROOT, 'bench', 'results', `${suite}.json`);
  let previous: string | undefined;
  beforeAll(async () => {
    previous = await readFile(results, 'utf8').catch(() => undefined);
  });
  afterAll(async () => {
    if (previous !== undefined) await writeFile(results, previous);
    else await rm(results, { force: true });
  });
  return results;
}

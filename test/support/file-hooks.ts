/**
 * Per-test and per-file work that helper modules register once, when first imported, and that the
 * hooks of test/support/setup.ts run in every test file.
 *
 * Why a helper module must not call `afterEach` (or any hook) at its top level: the test files of a
 * fork share its module cache (Vitest's `isolate: false`), so a helper is evaluated once per fork,
 * by the first file that imports it. A hook registered then belongs to that first file alone; the
 * files run after it in the same fork would miss the cleanup. setup.ts, a setup file, is evaluated
 * again before every test file, so the hooks it registers exist in every file, and they call what
 * the helpers imported so far in this fork have registered here.
 *
 * A registered function runs in every later file of the fork, including files that never imported
 * its helper: it must only clean up what its helper made (a set of its nodes, sockets, brokers…),
 * which is empty there. A check that asserts on the whole process (handle counts and the like)
 * belongs in a function the test files call themselves (see test/actors/placement/support.ts).
 */
type Work = () => void | Promise<void>;

const fileStart: (() => void)[] = [];
const afterTest: Work[] = [];
const afterFile: Work[] = [];

/**
 * `reset` runs synchronously at the start of each later test file, before the file is imported:
 * for module state that must start fresh in each file, as it would in a fresh module.
 */
export function atFileStart(reset: () => void): void {
  fileStart.push(reset);
}

/**
 * `cleanup` runs after each test, after the test file's own `afterEach` hooks and before the leak
 * check of setup.ts (as a hook registered at the helper's import ran). It runs again after each
 * file's last hooks, in case a failing hook kept it from running after the last test. Cleanups
 * run last-registered first, as Vitest runs `afterEach` hooks (a helper's cleanup before that of
 * the helpers it imports).
 */
export function afterEachTest(cleanup: Work): void {
  afterTest.push(cleanup);
}

/** `cleanup` runs after each test file's own `afterAll` hooks (as a hook registered at the helper's import ran). */
export function afterEachFile(cleanup: Work): void {
  afterFile.push(cleanup);
}

/** For setup.ts. */
export function runFileStart(): void {
  for (const reset of fileStart) reset();
}

/** For setup.ts. */
export function runAfterTest(): Promise<void> {
  return runAll(afterTest);
}

/** For setup.ts. */
export function runAfterFile(): Promise<void> {
  return runAll(afterFile);
}

/** Runs every one, last-registered first, even when one throws; then throws what they threw. */
async function runAll(work: readonly Work[]): Promise<void> {
  const errors: unknown[] = [];
  for (const run of [...work].reverse()) {
    try {
      await run();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, errors.map((error) => (error instanceof Error ? error.message : String(error))).join('; '));
}

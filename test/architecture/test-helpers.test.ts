/**
 * Test files share their fork's module cache (vitest.config.ts, `isolate: false`), so a helper
 * module is evaluated once per fork: a hook it registered at import would run for the first file
 * that imported it only. Helpers register per-file work with test/support/file-hooks.ts instead,
 * or export a function the test files call. This holds every helper (a .ts under test/ that is not
 * a test file, setup.ts aside) to that: no Vitest hook called at a module's top level.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const TEST = join(projectRoot, 'test');
const TOP_LEVEL_HOOK = /^(?:afterEach|beforeEach|afterAll|beforeAll)\s*\(/m;

function helpers(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : helpers(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('test helpers', () => {
  it('register no Vitest hook at import', () => {
    const offenders = helpers(TEST)
      .map((file) => relative(TEST, file))
      .filter((file) => file !== join('support', 'setup.ts') && TOP_LEVEL_HOOK.test(readFileSync(join(TEST, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the check sees a hook at the top of a module', () => {
    expect(TOP_LEVEL_HOOK.test("import { afterEach } from 'vitest';\nafterEach(() => {});\n")).toBe(true);
    expect(TOP_LEVEL_HOOK.test('export function f(): void {\n  afterEach(() => {});\n}\n')).toBe(false);
  });
});

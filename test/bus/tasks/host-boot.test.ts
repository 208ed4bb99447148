/**
 * Issue 28 §1: what a thread or process host pays at boot. The task host module (what the host
 * imports beside the kernel, to run a handler) stays lean: its runtime imports (type-only ones are
 * erased) never reach an index module (a whole layer or the runtime) nor a package.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../support/run-script.js';

const SRC = join(projectRoot, 'src');
// A whole statement: `import …;` or `export … from …;`, so `import type` can be told apart.
const STATEMENT = /^(import|export)\s[^;]*?from\s+'([^']+)'/gms;

/** The src files `entry` loads at run time, itself included, and the packages it imports. */
function runtimeImports(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(STATEMENT)) {
      if (/^(import|export)\s+type\s/.test(match[0])) continue;
      const specifier = match[2]!;
      if (!specifier.startsWith('.')) {
        if (!specifier.startsWith('node:')) packages.add(specifier);
        continue;
      }
      visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(SRC, entry));
  return { files: [...files].map((file) => relative(SRC, file)).sort(), packages: [...packages].sort() };
}

describe('the task host module', () => {
  it('imports no index module and no package: only what running a handler needs', () => {
    const { files, packages } = runtimeImports('bus/tasks/executors/task-host.ts');
    expect(files.filter((file) => file.endsWith('index.ts'))).toEqual([]);
    expect(packages).toEqual([]);
    // The envelope module brings id generation (a package) and the actors index.
    expect(files).not.toContain('bus/tasks/envelope.ts');
    expect(files).toContain('bus/tasks/executors/run-handler.ts');
  });
});

/**
 * The project's code transpiled to JavaScript once (esbuild, file by file, no bundling) for tests
 * that start many child processes: starting tsx per child costs seconds on a loaded machine. The
 * output mirrors the repository's layout, with node_modules linked in.
 */
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { projectRoot } from '../../support/run-script.js';

function sources(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, into);
    else if (path.endsWith('.ts')) into.push(path);
  }
  return into;
}

/** Transpiles src/ and `fixture` (a path from the repository root); answers the output directory and a cleanup. */
export function buildForChildren(fixture: string): { readonly dir: string; readonly script: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'molo-children-'));
  buildSync({
    entryPoints: [...sources(join(projectRoot, 'src')), join(projectRoot, fixture)],
    outdir: dir,
    outbase: projectRoot,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'));
  return { dir, script: join(dir, fixture.replace(/\.ts$/, '.js')), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

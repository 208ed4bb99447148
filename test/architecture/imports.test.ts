/**
 * The import graph of src/ against docs' layering: each layer imports only from layers below it
 * (telemetry < actors < behaviours < data < bus < nodes < admin < cli), and no file reaches itself
 * through its imports, type-only imports included (they are real dependencies of the build).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const SRC = join(projectRoot, 'src');
const LAYERS = ['telemetry', 'actors', 'behaviours', 'data', 'bus', 'nodes', 'admin', 'cli'] as const;
// Static imports and re-exports (`import … from`, `export … from`, side-effect `import '…'`) and literal `import('…')`.
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** File → the src files it imports (`.js` specifiers name `.ts` sources). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((match) => resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')));
    graph.set(relative(SRC, file), [...new Set(targets)].map((target) => relative(SRC, target)));
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one file, or a file importing itself. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

function layerOf(file: string): number {
  return LAYERS.indexOf(file.split('/')[0] as (typeof LAYERS)[number]);
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('reads every source file and resolves every relative import to one', () => {
    expect(graph.size).toBeGreaterThan(100);
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} → ${target}`));
    expect(missing).toEqual([]);
  });

  it('has no import circles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('points down the layers only: no layer imports a layer above it', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => layerOf(file) >= 0 && layerOf(target) > layerOf(file)).map((target) => `${file} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const planted = new Map([
      ['actors/a.ts', ['actors/b.ts']],
      ['actors/b.ts', ['behaviours/c.ts']],
      ['behaviours/c.ts', ['actors/a.ts']],
    ]);
    expect(cycles(planted)).toEqual([['actors/a.ts', 'actors/b.ts', 'behaviours/c.ts']]);
    expect(layerOf('actors/b.ts') < layerOf('behaviours/c.ts')).toBe(true);
  });
});

/**
 * Run lines that work in a fresh clone: an example imports `molo`, which resolves to src/ only
 * with the `molo-source` condition that `npm run example` passes (`npx tsx examples/X.ts` fails
 * without a build, or runs a stale dist/ after one). Every example names its own command, and no
 * page or example tells a reader to run an example or the CLI in a way that fails in the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const exampleFiles = (): string[] => [
  ...readdirSync(join(projectRoot, 'examples')).filter((name) => name.endsWith('.ts')).map((name) => `examples/${name}`),
  'examples/cluster/main.ts',
  'examples/getting-started/main.ts',
];

/** A reader's command that fails here: an example through plain tsx, or the `molo` bin (not linked inside its own package). */
const FAILING = /npx tsx (?:--\S+ )*examples\/|npx molo\b/g;

describe('run lines', () => {
  it('every example program states `npm run example <its path>` (the demo: `npm start`)', () => {
    const wrong: string[] = [];
    for (const file of exampleFiles()) {
      const text = readFileSync(join(projectRoot, file), 'utf8');
      if (file === 'examples/demo.ts') {
        if (!text.includes('`npm start`')) wrong.push(`${file}: no npm start`);
        continue;
      }
      // placement-workers.ts is a module the placement example loads, not a program.
      if (file === 'examples/placement-workers.ts') continue;
      const run = /^ \* Run: (.+)$/m.exec(text)?.[1];
      if (run === undefined || !run.startsWith(`npm run example ${file}`)) wrong.push(`${file}: ${run ?? 'no Run line'}`);
    }
    expect(wrong).toEqual([]);
  });

  it('no page or example says `npx tsx examples/…`, or `npx molo` outside the README\'s Install section', () => {
    const pages = ['README.md', ...readdirSync(join(projectRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const found: string[] = [];
    for (const file of [...pages, ...exampleFiles(), 'examples/cluster/node.ts', 'examples/cluster/worker.ts', 'examples/getting-started/peer.ts']) {
      // The README's Install section speaks to an app that installed molo, where `npx molo` is right.
      readFileSync(join(projectRoot, file), 'utf8')
        .replace(/^## Install\n[\s\S]*?(?=^## )/m, (section) => section.replace(/[^\n]/g, ''))
        .split('\n')
        .forEach((line, i) => {
          for (const match of line.matchAll(FAILING)) found.push(`${file}:${i + 1}: ${match[0]}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('npm run example and npm run molo exist and exec node with the molo-source condition (no shell left to turn Ctrl-C into 130)', () => {
    const { scripts } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts['example']).toBe('exec node --conditions=molo-source --import tsx');
    expect(scripts['molo']).toBe('exec node --conditions=molo-source --import tsx src/cli/molo.ts');
  });
});

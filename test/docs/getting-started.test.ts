/**
 * docs/getting-started.md shows the example's code, not a copy that drifts: every TypeScript block
 * of the page is, verbatim, a piece of one of the files of examples/getting-started/ (which
 * test/examples/getting-started-example.test.ts runs), and the page links each of those files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const PAGE = readFileSync(join(projectRoot, 'docs', 'getting-started.md'), 'utf8');
const DIR = join(projectRoot, 'examples', 'getting-started');
const files = readdirSync(DIR).filter((name) => name.endsWith('.ts'));
const sources = files.map((name) => readFileSync(join(DIR, name), 'utf8'));

const tsBlocks = (markdown: string): string[] => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
/** The blocks of `markdown` found in none of `texts`, by their first line. */
const strays = (markdown: string, texts: readonly string[]): string[] =>
  tsBlocks(markdown)
    .filter((block) => !texts.some((text) => text.includes(block)))
    .map((block) => block.split('\n')[0]!);

describe('docs/getting-started.md', () => {
  it('every TypeScript block is verbatim in a file of examples/getting-started/', () => {
    expect(tsBlocks(PAGE).length).toBeGreaterThan(10);
    expect(strays(PAGE, sources)).toEqual([]);
  });

  it('links every file of the example', () => {
    expect(files).toEqual(expect.arrayContaining(['app.ts', 'greeter.ts', 'handlers.ts', 'main.ts', 'model.ts', 'peer.ts']));
    expect(files.filter((name) => !PAGE.includes(`](../examples/getting-started/${name})`))).toEqual([]);
  });

  it('the check can fail: an edited block is caught', () => {
    const edited = '```ts\nexport class Greeter extends GenServer<GreeterCall, string> {\n```\n';
    expect(strays(edited, sources)).toEqual(['export class Greeter extends GenServer<GreeterCall, string> {']);
  });
});

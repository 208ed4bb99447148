/**
 * The README's lists hold to the files that exist: every docs page is in Guides, every example
 * (file or folder) in Examples, every bench suite in Benchmarks, every src/ layer in Layout, and
 * every relative link in the README names a file or folder that exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const README = readFileSync(join(projectRoot, 'README.md'), 'utf8');

/** The text of the README section under `## title`, up to the next `## `. */
function section(markdown: string, title: string): string {
  const match = new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, 'm').exec(markdown);
  return match?.[1] ?? '';
}

/** Relative link targets of markdown links (`[text](target)`), without anchors. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith('#'))
    .map((target) => target.replace(/#.*$/, ''));
}

const docsPages = (): string[] => readdirSync(join(projectRoot, 'docs')).filter((name) => name.endsWith('.md'));
const examples = (): string[] => readdirSync(join(projectRoot, 'examples'), { withFileTypes: true }).map((entry) => entry.name);
/** A bench suite is a folder of bench/ with a suite.ts (bench/run.ts registers each). */
const benchSuites = (): string[] =>
  readdirSync(join(projectRoot, 'bench'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(projectRoot, 'bench', entry.name, 'suite.ts')))
    .map((entry) => entry.name);
const layers = (): string[] =>
  readdirSync(join(projectRoot, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

/** What of `wanted` the list `text` leaves out, by `present(text, item)`. */
function missing(text: string, wanted: readonly string[], present: (text: string, item: string) => boolean): string[] {
  return wanted.filter((item) => !present(text, item));
}

const linksTo = (prefix: string) => (text: string, name: string) => relativeLinks(text).some((target) => target.replace(/\/$/, '') === `${prefix}${name}`);
const namesSuite = (text: string, suite: string) => text.includes(`- \`${suite}\`:`);
const namesLayer = (text: string, layer: string) => text.includes(`\`src/${layer}\``);

describe('README', () => {
  it('Guides links every docs page', () => {
    expect(docsPages().length).toBeGreaterThan(20);
    expect(missing(section(README, 'Guides'), docsPages(), linksTo('docs/'))).toEqual([]);
  });

  it('Examples links every example program and folder', () => {
    expect(examples()).toContain('cluster');
    expect(missing(section(README, 'Examples'), examples(), linksTo('examples/'))).toEqual([]);
  });

  it('Benchmarks names every bench suite', () => {
    expect(benchSuites()).toContain('tasks');
    const run = readFileSync(join(projectRoot, 'bench', 'run.ts'), 'utf8');
    // Each suite folder is registered with the runner, so the README's list is what `npm run bench` takes.
    expect(benchSuites().filter((suite) => !run.includes(`'./${suite}/suite.js'`))).toEqual([]);
    expect(missing(section(README, 'Benchmarks'), benchSuites(), namesSuite)).toEqual([]);
  });

  it('Layout names every src/ layer', () => {
    expect(layers()).toContain('nodes');
    expect(missing(section(README, 'Layout'), layers(), namesLayer)).toEqual([]);
  });

  it('every relative link names a file or folder that exists', () => {
    const broken = relativeLinks(README).filter((target) => !existsSync(join(projectRoot, target)));
    expect(broken).toEqual([]);
  });

  it('the checks can fail: a stale README of the same shape is caught', () => {
    const stale = '## Guides\n- [Actors](docs/actors.md), [Gone](docs/gone.md)\n## Benchmarks\n- `actors`: x\n## Layout\n- `src/actors`: kernel\n';
    expect(missing(section(stale, 'Guides'), ['actors.md', 'tasks.md'], linksTo('docs/'))).toEqual(['tasks.md']);
    expect(missing(section(stale, 'Benchmarks'), ['actors', 'tasks'], namesSuite)).toEqual(['tasks']);
    expect(missing(section(stale, 'Layout'), ['actors', 'bus'], namesLayer)).toEqual(['bus']);
    expect(relativeLinks(stale).filter((target) => !existsSync(join(projectRoot, target)))).toEqual(['docs/gone.md']);
  });
});

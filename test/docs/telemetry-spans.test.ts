/**
 * docs/telemetry.md's trace list holds every span Molo opens: the names passed to `startSpan`
 * directly and those of the `…SpanName` tables the areas define.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Span names in source text: `startSpan('molo.x', …)` (also `?.(` / `!(`), and the values of `XSpanName = { … }`. */
function spanNames(text: string): string[] {
  const direct = [...text.matchAll(/startSpan[?!.]*\(\s*'([\w.]+)'/g)].map((match) => match[1]!);
  const tables = [...text.matchAll(/SpanName = \{([^}]*)\}/g)].flatMap((match) => [...match[1]!.matchAll(/'(molo\.[\w.]+)'/g)].map((value) => value[1]!));
  return [...direct, ...tables];
}

describe('docs/telemetry.md traces', () => {
  it('lists every span the code opens', () => {
    const names = [...new Set(sourceFiles(join(projectRoot, 'src')).flatMap((file) => spanNames(readFileSync(file, 'utf8'))))].sort();
    expect(names).toEqual(expect.arrayContaining(['molo.call', 'molo.task.run', 'molo.stream.publish']));
    const page = readFileSync(join(projectRoot, 'docs', 'telemetry.md'), 'utf8');
    const traces = page.slice(page.indexOf('## Traces'), page.indexOf('\n## ', page.indexOf('## Traces') + 1));
    expect(names.filter((name) => !traces.includes(`\`${name}\``))).toEqual([]);
  });

  it('finds span names both ways (the check can fail)', () => {
    expect(spanNames("const s = this.observer!.startSpan!('molo.call', {});")).toEqual(['molo.call']);
    expect(spanNames("export const XSpanName = {\n  /** one */\n  run: 'molo.x.run',\n} as const;")).toEqual(['molo.x.run']);
  });
});

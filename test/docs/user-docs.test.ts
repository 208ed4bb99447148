/**
 * User docs speak to users: no internal spec ids (requirement ids such as R7-8 or S7-5, spec
 * numbers, "data spec rule 10") in README, CHANGELOG or docs/. Specs live outside the package.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const SPEC_ID = /\b(?:[A-Z]{1,2}\d+-\d+|BP-\d+)\b|\bspec \d{2}\b|\bspec rule\b|\b\d{2}-[a-z]+\.md\b/g;

describe('user docs', () => {
  it('carry no internal spec ids', () => {
    const files = ['README.md', 'CHANGELOG.md', ...readdirSync(join(projectRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const found: string[] = [];
    for (const file of files) {
      readFileSync(join(projectRoot, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const match of line.matchAll(SPEC_ID)) found.push(`${file}:${i + 1}: ${match[0]}`);
        });
    }
    expect(found).toEqual([]);
  });
});

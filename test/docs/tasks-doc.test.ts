/** docs/tasks.md's storage table and its count hold to the tables the queue creates. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskTablesOf } from '../../src/bus/tasks/schema.js';
import { projectRoot } from '../support/run-script.js';

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

describe('docs/tasks.md storage', () => {
  it('names every table the queue creates, and says how many', () => {
    const page = readFileSync(join(projectRoot, 'docs', 'tasks.md'), 'utf8');
    const storage = page.slice(page.indexOf('## Storage'), page.indexOf('\n## ', page.indexOf('## Storage') + 1));
    const documented = [...storage.matchAll(/^\| `<p>_(\w+)` \|/gm)].map((match) => `p_${match[1]!}`).sort();
    const created = Object.values(taskTablesOf('p')).sort();
    expect(documented).toEqual(created);
    expect(storage.toLowerCase()).toContain(`${WORDS[created.length]} tables`);
  });
});

import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/orm.ts', () => {
  it('declares models, queries, preloads, paginates, reports a conflict and prints write events', async () => {
    const result = await runScript('examples/orm.ts');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('event: insert users 1 (commit 1.1)');
    expect(result.stdout).toContain('event: insert posts 3 (commit 2.3)');
    expect(result.stdout).toContain('popular: Actors');
    expect(result.stdout).toContain('ada@example.com: 2 post(s)');
    expect(result.stdout).toContain("bob'; DROP TABLE users; --@example.com: 1 post(s)");
    expect(result.stdout).toContain('pages: 2 + 1, last page: true');
    expect(result.stdout).toContain('conflict: expected version 1, now 2');
  });
});

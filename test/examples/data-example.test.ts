import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../support/pg.js';
import { runScript } from '../support/run-script.js';

describe('examples/data.ts', () => {
  let fresh: FreshDatabase;
  beforeAll(() => {
    fresh = freshDatabase('example');
  });
  afterAll(() => fresh.drop());

  it('runs the same code on Postgres and SQLite', async () => {
    const result = await runScript('examples/data.ts', { env: { MOLO_PG_DATABASE: fresh.database } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const backend of ['postgres', 'sqlite']) {
      expect(result.stdout).toContain(`${backend}: savepoint rolled back (out of pears)`);
      expect(result.stdout).toContain(`${backend}: committed apples, O'Reilly's; DROP TABLE x`);
      expect(result.stdout).toContain(`${backend}: streamed 2 rows`);
    }
    expect(result.stdout).toContain('healthy: true');
  });
});

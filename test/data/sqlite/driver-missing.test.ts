import { describe, expect, it } from 'vitest';
import { DataErrorCode, SqliteDriverMissing } from '../../../src/data/index.js';
import { checkSqliteDriver } from '../../../src/data/sqlite/driver.js';

// The end-to-end case (an app that installed molo without better-sqlite3) is in test/package/pack.test.ts.
describe('better-sqlite3 is an optional peer dependency', () => {
  it('resolves when installed', () => {
    expect(() => checkSqliteDriver({ backend: 'sqlite', host: '/tmp/x.db' })).not.toThrow();
  });

  it('its absence is one typed error naming the package', () => {
    let caught: unknown;
    try {
      checkSqliteDriver({ backend: 'sqlite', host: '/tmp/x.db' }, 'better-sqlite3-absent-for-this-test');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SqliteDriverMissing);
    expect(caught).toMatchObject({ code: DataErrorCode.SqliteDriverMissing, packageName: 'better-sqlite3', retryable: false });
    expect((caught as Error).message).toContain('npm install better-sqlite3');
  });
});

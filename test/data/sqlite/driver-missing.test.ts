import { describe, expect, it } from 'vitest';
import { DataErrorCode, SqliteDriverMissing } from '../../../src/data/index.js';
import { checkSqliteDriver } from '../../../src/data/sqlite/driver.js';

// The installed case (an app that ran only `npm install molo` opens SQLite) is in test/package/pack.test.ts.
describe('better-sqlite3, loaded only when SQLite is opened', () => {
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

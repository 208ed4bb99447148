import { describe, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/schema.ts', () => {
  it('applies a migration, syncs a missing column once, heals a missing table and lists the ledger', async () => {
    const result = await runScript('examples/schema.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    expectCleanRun(result, [
      'migrations: 1 pending; up applied 0001_create_users',
      'sync: addColumn users.email (1 statement(s)); again: 0 statement(s)',
      'heal: audit rows 1, journal files 1',
      'ledger: migration 0001_create_users',
      'ledger: heal auto/<stamp>_audit_createTable',
      'status: 1 applied, 0 pending, 1 heal(s) journaled',
    ]);
  });
});

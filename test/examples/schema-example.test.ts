import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/schema.ts', () => {
  it('applies a migration, syncs a missing column once, heals a missing table and lists the ledger', async () => {
    const result = await runScript('examples/schema.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('migrations: 1 pending; up applied 0001_create_users');
    expect(out).toContain('sync: addColumn users.email (1 statement(s)); again: 0 statement(s)');
    expect(out).toContain('heal: audit rows 1, journal files 1');
    expect(out).toContain('ledger: migration 0001_create_users');
    expect(out).toContain('ledger: heal auto/<stamp>_audit_createTable');
    expect(out).toContain('status: 1 applied, 0 pending, 1 heal(s) journaled');
  });
});

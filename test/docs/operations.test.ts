/**
 * docs/operations.md's tables of every metric and every cap hold to the code: regenerate them with
 * `npx tsx scripts/gen-ops-reference.ts`. Also checks the generator sees what it should: every
 * caps-like export of src/ is a row, and metrics that are built in a loop are read by name.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capConstants, capRows, metricRows, OPERATIONS_PAGE, renderOperationsPage } from '../../scripts/ops-reference.js';

describe('docs/operations.md', () => {
  it('has the metrics and caps tables the code gives', { timeout: 60_000 }, async () => {
    const page = readFileSync(OPERATIONS_PAGE, 'utf8');
    expect(page, 'docs/operations.md is stale: run npx tsx scripts/gen-ops-reference.ts').toBe(await renderOperationsPage(page));
  });

  it('reads each metric by its real name, help and labels, including those defined in a loop', { timeout: 60_000 }, async () => {
    const rows = await metricRows();
    expect(rows.filter((row) => row.name.includes('<'))).toEqual([]);
    // Built in a loop over a table in src/bus/streams/metrics.ts.
    expect(rows.find((row) => row.name === 'molo_stream_consumer_lag')).toMatchObject({ type: 'gauge', labels: 'store, stream, consumer' });
    // Defined inline, outside any *Metrics class.
    expect(rows.find((row) => row.name === 'molo_orm_heals_total')).toMatchObject({ type: 'counter', labels: 'plan, result' });
    expect(new Set(rows.map((row) => row.name)).size).toBe(rows.length);
    for (const row of rows) expect(row.help, row.name).not.toBe('');
  });

  it('lists every exported cap, ceiling, limit and default of src/', { timeout: 60_000 }, async () => {
    const rows = await capRows();
    const listed = new Set(rows.map((row) => row.constant));
    const names = capConstants().map((entry) => entry.constant);
    expect(names).toEqual(expect.arrayContaining(['KV_LIMITS', 'STREAM_RETENTION_CEILINGS', 'TOPIC_SEED_CEILINGS', 'MAX_MAILBOX_CAPACITY', 'SYNC_BATCH_CAPS']));
    // The only ones left out are not numbers (a table name, a host).
    for (const name of names.filter((constant) => !listed.has(constant))) expect(name, name).toMatch(/^DEFAULT_/);
    expect(rows.find((row) => row.constant === 'KV_LIMITS' && row.key === 'maxKeys')?.value).toBe('1,048,576');
    expect(rows.find((row) => row.constant === 'SQLITE_LIMITS' && row.key === 'readers')?.value).toBe('0 … 8');
  });
});

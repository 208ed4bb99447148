/**
 * `traced(db)`: a span per statement and per transaction on both backends, through a registered
 * tracer provider; the SQL text is recorded, its values never are.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DataSpanName, DbError, traced, type Database } from '../../src/data/index.js';
import { RecordingTracerProvider } from '../telemetry/helpers.js';
import { BACKENDS, openForEachTest } from './backends.js';

const provider = new RecordingTracerProvider();
beforeAll(() => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
});
afterAll(() => trace.disable());
beforeEach(() => {
  provider.spans.length = 0;
});

describe.each(BACKENDS)('spans on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, (opened) => {
    db = traced(opened.db);
  });

  it('a statement opens a span with the SQL text and the row count, never the values', async () => {
    await db.query('CREATE TABLE secrets (id INTEGER PRIMARY KEY, token TEXT NOT NULL)');
    await db.query('INSERT INTO secrets (id, token) VALUES ($1, $2)', [1, 'hunter2'], { correlationId: 'req-7' });
    const spans = provider.ended(DataSpanName.query);
    expect(spans).toHaveLength(2);
    expect(spans[1]!.attributes).toMatchObject({
      'db.system': backend.name === 'postgres' ? 'postgresql' : 'sqlite',
      'db.statement': 'INSERT INTO secrets (id, token) VALUES ($1, $2)',
      'molo.correlation_id': 'req-7',
      'db.affected': 1,
    });
    expect(JSON.stringify(provider.spans.map((span) => span.attributes))).not.toContain('hunter2');
  });

  it('a failed statement ends its span as an error; a transaction has a span of its own', async () => {
    const failure = await db.query('SELECT * FROM no_such_table').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DbError);
    const [failed] = provider.ended(DataSpanName.query);
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
    });
    await expect(db.transaction(async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    const transactions = provider.ended(DataSpanName.transaction);
    expect(transactions.map((span) => span.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR]);
  });
});

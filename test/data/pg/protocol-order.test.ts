/**
 * A server that breaks the message order must not shift answers to the wrong callers: the
 * connection detects each out-of-order sequence, ends itself with ProtocolError, and fails every
 * statement in flight with it. A scripted fake server (real TCP, Postgres wire bytes) holds the
 * pipelined statements' answers until all have arrived, then sends one broken sequence.
 */
import { describe, expect, it } from 'vitest';
import { isShutdownWith } from '../../../src/actors/index.js';
import { DbError, ProtocolError } from '../../../src/data/errors.js';
import { connectPostgres, type PgConnection } from '../../../src/data/pg/index.js';
import { answer, be, startFakePg, type ClientUnit, type FakeSession } from '../../support/pg-fake.js';
import { testSystem } from '../../support/systems.js';

type Outcome = { rows: unknown[] } | { error: string } | 'no answer';

/** Runs `sqls` pipelined against a fake that, once all arrived, sends `sequence(units)`; what each caller got. */
async function pipelined(
  sqls: readonly { sql: string; params?: unknown[] }[],
  sequence: (units: ClientUnit[]) => Buffer[],
): Promise<{ outcomes: Outcome[]; conn: PgConnection; ended: unknown }> {
  const fake = await startFakePg({
    unit: (session: FakeSession, _unit, index) => {
      if (index === sqls.length - 1) session.write(...sequence(session.units));
    },
  });
  const conn = await connectPostgres(testSystem(), { host: '127.0.0.1', port: fake.port, user: 'u', database: 'd' });
  try {
    const calls = sqls.map(({ sql, params }) =>
      conn.query(sql, params as never, { timeoutMs: 3_000 }).then(
        (result): Outcome => ({ rows: result.rows.map((row) => Object.values(row)[0]) }),
        (error: unknown): Outcome => (error instanceof ProtocolError ? { error: 'ProtocolError' } : error instanceof DbError && error.code === 'DB_STATEMENT_TIMEOUT' ? 'no answer' : { error: (error as DbError).code ?? String(error) }),
      ),
    );
    const outcomes = await Promise.all(calls);
    const ended = await Promise.race([conn.ended, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    return { outcomes, conn, ended };
  } finally {
    await conn.close();
    await fake.close();
  }
}

const FAILED_ALL = (n: number): Outcome[] => Array.from({ length: n }, () => ({ error: 'ProtocolError' }));

function expectEndedWithProtocolError(ended: unknown): void {
  expect(isShutdownWith(ended as never)).toBe(true);
  expect((ended as { shutdown: unknown }).shutdown).toBeInstanceOf(ProtocolError);
}

describe('out-of-order server messages', () => {
  it('ErrorResponse not followed by ReadyForQuery: no later answer goes to the wrong caller', async () => {
    const { outcomes, ended } = await pipelined([{ sql: 'select a' }, { sql: 'select b' }, { sql: 'select c' }], (units) => [
      be.error('42000', 'a failed'),
      answer(units[1]!, [['b']]).all,
      answer(units[2]!, [['c']]).all,
    ]);
    expect(outcomes).toEqual(FAILED_ALL(3));
    expectEndedWithProtocolError(ended);
  });

  it('ReadyForQuery before the statement completed', async () => {
    const { outcomes, ended } = await pipelined([{ sql: 'select a' }, { sql: 'select b' }], (units) => [be.ready(), answer(units[0]!, [['a']]).all, answer(units[1]!, [['b']]).all]);
    expect(outcomes).toEqual(FAILED_ALL(2));
    expectEndedWithProtocolError(ended);
  });

  it('a second result inside one extended statement', async () => {
    const { outcomes, ended } = await pipelined([{ sql: 'select $1::text', params: ['a'] }, { sql: 'select $1::text || 1', params: ['b'] }], (units) => {
      const first = answer(units[0]!, [['a']]);
      return [...first.body, be.dataRow(['b']), be.commandComplete('SELECT 1'), first.ready, answer(units[1]!, [['b']]).all];
    });
    expect(outcomes).toEqual(FAILED_ALL(2));
    expectEndedWithProtocolError(ended);
  });

  it('a DataRow after an ErrorResponse', async () => {
    const { outcomes, ended } = await pipelined([{ sql: 'select a' }, { sql: 'select b' }], (units) => [be.error('42000', 'a failed'), be.dataRow(['x']), be.ready(), answer(units[1]!, [['b']]).all]);
    expect(outcomes).toEqual(FAILED_ALL(2));
    expectEndedWithProtocolError(ended);
  });

  it('in order, with notices and parameter changes anywhere, every caller gets its own answer', async () => {
    const { outcomes, ended } = await pipelined([{ sql: 'select a' }, { sql: 'select $1::text', params: ['b'] }, { sql: 'select c' }], (units) => {
      const second = answer(units[1]!, [['b']]);
      return [
        be.error('42000', 'a failed'),
        be.notice('between'),
        be.ready(),
        ...second.body.slice(0, 2),
        be.parameterStatus('application_name', 'x'),
        ...second.body.slice(2),
        be.notice('before ready'),
        second.ready,
        answer(units[2]!, [['c1'], ['c2']]).all,
      ];
    });
    expect(outcomes).toEqual([{ error: 'DB_QUERY_FAILED' }, { rows: ['b'] }, { rows: ['c1', 'c2'] }]);
    expect(ended).toBe('still open');
  });
});

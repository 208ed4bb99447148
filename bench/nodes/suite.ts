/**
 * `npm run bench -- nodes`: remote send throughput and call round trips between two nodes on
 * loopback (this process and a child process), against Erlang distribution between two local `erl`
 * nodes with the same message shapes (integers; calls echo them). Rows carry bytes per message on
 * the link (sends: one way; calls: both ways). `remote_call` has one call outstanding at a time;
 * `remote_call_concurrent` has 16 callers with one each (Erlang: 16 processes). Target: Molo ÷
 * Erlang ≥ 1 on each.
 */
import { formatTable, roundFields, ROUNDS_NOTE, spreadCell, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import { startErlangNodes } from './erlang.js';
import { callRun, concurrentCallRun, sendRun, startPair, type Measured, type MoloPair } from './molo.js';

const CASES = ['remote_send', 'remote_call', 'remote_call_concurrent'] as const;
/** Keep in step with CONCURRENCY in erlang/molo_nodes_bench.erl: callers with a call outstanding each. */
const CONCURRENCY = 16;
type CaseName = (typeof CASES)[number];

/** Keep in step with sizes/2 in erlang/molo_nodes_bench.erl: {N, Rounds, Warmup}. */
const SIZES: Record<CaseName, Record<'full' | 'quick', readonly [number, number, number]>> = {
  remote_send: { full: [1_000_000, 3, 100_000], quick: [100_000, 1, 10_000] },
  remote_call: { full: [20_000, 3, 2_000], quick: [2_000, 1, 200] },
  remote_call_concurrent: { full: [100_000, 3, 10_000], quick: [10_000, 1, 1_600] },
};

const RUNS: Record<CaseName, (pair: MoloPair, n: number) => Promise<Measured>> = {
  remote_send: sendRun,
  remote_call: callRun,
  remote_call_concurrent: (pair, n) => concurrentCallRun(pair, n, CONCURRENCY),
};

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

async function measureMolo(pair: MoloPair, name: CaseName, quick: boolean): Promise<Row> {
  const [n, rounds, warmup] = SIZES[name][quick ? 'quick' : 'full'];
  const run = RUNS[name];
  await run(pair, warmup);
  const runs: Measured[] = [];
  for (let i = 0; i < rounds; i++) runs.push(await run(pair, n));
  const rates = runs.map((measured) => n / (measured.us / 1e6));
  const bytes = runs.reduce((sum, measured) => sum + measured.bytes, 0);
  const fields = roundFields(rates);
  return { case: name, impl: 'molo', ...fields, n, us_per_op: round(1e6 / fields.ops_per_s, 3), bytes_per_msg: round(bytes / (n * rounds), 1) };
}

export const nodesSuite: Suite = {
  name: 'nodes',
  description: 'remote send and call between two nodes on loopback, against two Erlang nodes',
  cases: CASES,
  async run(options: SuiteOptions): Promise<SuiteResult> {
    const selected = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
    const rows: Row[] = [];
    let failed = false;
    const pair = await startPair();
    const erlang = await startErlangNodes();
    try {
      for (const name of selected) {
        try {
          rows.push(await measureMolo(pair, name, options.quick));
        } catch (error) {
          failed = true;
          rows.push({ case: name, impl: 'molo', ops_per_s: null, error: String(error) });
        }
        if ('unavailable' in erlang) {
          rows.push({ case: name, impl: 'erlang', ops_per_s: null, unavailable: erlang.unavailable });
          continue;
        }
        try {
          rows.push(await erlang.run(name, options.quick));
        } catch (error) {
          failed = true;
          rows.push({ case: name, impl: 'erlang', ops_per_s: null, error: String(error) });
        }
      }
    } finally {
      await pair.stop();
      if (!('unavailable' in erlang)) await erlang.dispose();
    }
    const ratios: Row[] = [];
    for (const name of selected) {
      const molo = rows.find((row) => row.case === name && row.impl === 'molo')?.ops_per_s;
      const erl = rows.find((row) => row.case === name && row.impl === 'erlang')?.ops_per_s;
      const ratio = typeof molo === 'number' && typeof erl === 'number' ? round(molo / erl, 2) : null;
      ratios.push({ case: name, impl: 'ratio', ops_per_s: null, vs_erlang: ratio, target: 'vs_erlang >= 1', met: ratio !== null && ratio >= 1 });
    }
    const table = formatTable(
      ['case', 'impl', 'n', 'ops/s', 'µs/op', 'bytes/msg', 'spread'],
      rows.map((row) => [
        row.case,
        row.impl,
        row.n === undefined ? '' : Number(row.n).toLocaleString('en-US'),
        row.ops_per_s === null ? 'n/a' : row.ops_per_s.toLocaleString('en-US'),
        typeof row.us_per_op === 'number' ? row.us_per_op.toFixed(3) : '',
        typeof row.bytes_per_msg === 'number' ? row.bytes_per_msg.toFixed(1) : '',
        spreadCell(row),
      ]),
    );
    const ratioLines = ratios.map(
      (row) => `${String(row.case).padEnd(22)} ops/s molo÷erlang ${row.vs_erlang === null ? 'n/a' : `${String(row.vs_erlang)}x`} [target ≥ 1: ${row.met ? 'met' : 'MISSED'}]`,
    );
    const errors = rows.filter((row) => typeof row.error === 'string').map((row) => `${row.case} ${row.impl}: ${String(row.error)}`);
    const version = 'unavailable' in erlang ? `Erlang unavailable: ${erlang.unavailable}` : `Erlang ${erlang.version}, two VMs, erl +S 1:1, inet_tcp_dist`;
    const report = [
      `nodes suite (${options.quick ? 'quick' : 'full'}): ${version}; Molo: two Node processes, TCP on loopback, no TLS.`,
      table,
      ROUNDS_NOTE,
      '',
      'Ratios (Molo ÷ Erlang, higher is better):',
      ...ratioLines,
      ...errors,
    ].join('\n');
    return { rows: [...rows, ...ratios], report, failed };
  },
};

import type { Row, Suite } from '../suite.js';
import { restartLatency } from './restart-latency.js';

/** `npm run bench -- programs`: SIGKILL → running again, at the lowest backoff. */
export const programsSuite: Suite = {
  name: 'programs',
  description: 'OS program restart latency after SIGKILL, backoff 0 (target: well under 2 s)',
  cases: ['restart'],
  async run({ quick }) {
    const rows: Row[] = [];
    const lines = ['program restart latency (SIGKILL until the new process prints its first line)'];
    for (const program of ['node', 'sh'] as const) {
      const result = await restartLatency({ program, samples: quick ? 3 : 20 });
      rows.push({ case: 'restart', impl: `molo/${program}`, ops_per_s: null, mean_ms: result.mean_ms, p99_ms: result.p99_ms });
      lines.push(`  ${program.padEnd(4)} program: mean ${result.mean_ms} ms, p99 ${result.p99_ms} ms  [target < 2000 ms: ${result.p99_ms < 2_000 ? 'met' : 'missed'}]`);
    }
    return { rows, report: lines.join('\n'), failed: false };
  },
};

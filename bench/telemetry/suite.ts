import type { Row, Suite } from '../suite.js';
import { describeOverhead, measureOverhead } from './overhead.js';

/** `npm run bench -- telemetry`: send and call with telemetry off and on, in one process. */
export const telemetrySuite: Suite = {
  name: 'telemetry',
  description: 'send and call with telemetry off vs on (target: on within 5%)',
  cases: ['overhead'],
  async run({ quick }) {
    const results = await measureOverhead(quick ? 2 : 11);
    const rows: Row[] = results.flatMap((result) =>
      (['off', 'on'] as const).map((mode) => ({
        case: result.case,
        impl: mode === 'off' ? 'molo' : 'molo+telemetry',
        ops_per_s: Math.round((result.count / result.best[mode].cpu) * 1_000),
        cpu_ms: result.best[mode].cpu,
        wall_ms: result.best[mode].wall,
      })),
    );
    const report = ['telemetry overhead (best of rounds; on = pino at info, metrics, tracing without an SDK)', ...results.flatMap(describeOverhead)];
    return { rows, report: report.join('\n'), failed: false };
  },
};

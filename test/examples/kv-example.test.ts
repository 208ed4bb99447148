import { describe, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/kv.ts', () => {
  it('runs the same KV code in memory and on SQLite', async () => {
    // Info lines (sqlite.opened) go to stderr; anything at warn or above there is a failure.
    const result = await runScript('examples/kv.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    expectCleanRun(
      result,
      ['memory', 'sqlite'].flatMap((backend) => [
        `${backend}: versions grow true, user:1 = ada`,
        `${backend}: cfg.retries = 3`,
        `${backend}: scan user:1,user:2 | user:3 (last page: true)`,
        `${backend}: session after its TTL exists: false`,
        `${backend}: lease taken true, second taker false, renewed true, released true`,
      ]),
    );
  });
});

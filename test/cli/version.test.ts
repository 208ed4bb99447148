import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runMolo } from '../admin/helpers.js';

describe('molo --version', () => {
  it("prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const run = await runMolo([flag]);
      expect(run).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

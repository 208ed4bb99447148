/**
 * `molo ps --sort/--filter/--watch` against a real node: sorted largest first, filtered by text,
 * repeated `--count` times at `--interval`; bad values are usage errors (exit 2). One run is a child
 * process, as a script would run it.
 */
import { describe, expect, it } from 'vitest';
import { GenServer, Supervisor } from '../../src/behaviours/index.js';
import { runCli } from '../../src/cli/run.js';
import { Counter, runMolo, startTestNode } from './helpers.js';

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return runCli(argv, { stdout: (text) => void (out += text), stderr: (text) => void (err += text), env: {} }).then((code) => ({ code, out, err }));
}

describe('molo ps', () => {
  it('sorts, filters and watches', { timeout: 30_000 }, async () => {
    const counter = (id: string) => ({ id, start: ({ system, parent }: { system: any; parent: any }) => GenServer.start(system, () => new Counter(id), { link: parent }) });
    const { node } = await startTestNode({ root: { children: [counter('busy'), counter('idle')] } });
    const url = node.adminUrl!;
    const busy = (await Supervisor.whichChild(node.system, node.root, 'busy')).ref as never;
    for (let i = 0; i < 25; i++) await node.system.call(busy, 'get');

    const sorted = await cli(['ps', '--sort', 'handled', '--filter', 'counter', '--url', url]);
    expect(sorted.code, sorted.err).toBe(0);
    const rows = sorted.out.split('\n').filter((line) => line.includes('Counter'));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(String(busy));
    expect(sorted.out).toMatch(/^2 shown \(filter 'counter'\)$/m);

    const json = await cli(['ps', '--json', '--sort', 'handled', '--url', url]);
    const handled = (JSON.parse(json.out) as { processes: { messagesHandled: number }[] }).processes.map((entry) => entry.messagesHandled);
    expect(handled).toEqual([...handled].sort((a, b) => b - a));

    const started = Date.now();
    const watched = await runMolo(['ps', '--watch', '--interval', '300', '--count', '3', '--filter', 'Counter', '--url', url]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout.match(/^node /gm)).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);

    for (const argv of [['ps', '--sort', 'bogus'], ['ps', '--interval', '500'], ['ps', '--watch', '--interval', '10'], ['tree', '--sort', 'handled'], ['ps', '--watch', '--count', '0']]) {
      const refused = await cli([...argv, '--url', url]);
      expect(refused.code, argv.join(' ')).toBe(2);
    }
  });
});

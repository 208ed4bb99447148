/**
 * Every `molo` read against a node with a token, run as a child process without MOLO_ADMIN_TOKEN
 * (or with a wrong one), exits 1 and says which variable to set; with the right one it exits 0.
 */
import { describe, expect, it } from 'vitest';
import { runMolo, startTestNode } from './helpers.js';

const TOKEN = 'auth-hint-token-0123456789abcdef';

describe('a 401 names MOLO_ADMIN_TOKEN', () => {
  it('on tree, ps, nodes and programs (health is a probe: no token; streams and tasks have their own)', { timeout: 60_000 }, async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN } });
    try {
      const url = ['--url', node.adminUrl!];
      const commands = [['tree'], ['ps'], ['nodes'], ['programs', 'status'], ['programs', 'logs', 'root/p', 'x']];
      const missing = await Promise.all(commands.map((command) => runMolo([...command, ...url])));
      const wrong = await Promise.all(commands.map((command) => runMolo([...command, ...url], { MOLO_ADMIN_TOKEN: 'not-the-token-0123456789' })));
      for (const [i, run] of missing.entries()) {
        expect([commands[i]!.join(' '), run.code]).toEqual([commands[i]!.join(' '), 1]);
        expect(run.stderr, commands[i]!.join(' ')).toMatch(/HTTP 401.*ADMIN_UNAUTHORIZED.*; set MOLO_ADMIN_TOKEN to the node's admin\.token/);
      }
      for (const [i, run] of wrong.entries()) expect(run.stderr, commands[i]!.join(' ')).toMatch(/HTTP 401.*MOLO_ADMIN_TOKEN is not the node's admin\.token/);
      const ok = await Promise.all([['tree'], ['ps'], ['health']].map((command) => runMolo([...command, ...url], { MOLO_ADMIN_TOKEN: TOKEN })));
      for (const run of ok) expect(run.code, run.stderr).toBe(0);
    } finally {
      await node.stop();
    }
  });
});

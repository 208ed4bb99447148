/**
 * The getting-started example's observer page lists both of its nodes: main.ts run as
 * `npm run example` runs it (a real child process forking the real peer), left running; its page's
 * SSE frame carries both nodes' links and trees (the peer's read through its admin actor), and in
 * Chromium the page shows both nodes and both trees. Then SIGTERM stops both, exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObserverFrame, TreeSnapshot } from '../../src/admin/index.js';
import { frameWhere, openObserver, type OpenPage } from '../admin/observer-page.js';
import { projectRoot, TS_NODE_ARGS } from '../support/run-script.js';

describe('examples/getting-started: the observer page', () => {
  it('lists the app node and the peer, each with its supervision tree', { timeout: 60_000 }, async () => {
    const child: ChildProcess = spawn(process.execPath, [...TS_NODE_ARGS, 'examples/getting-started/main.ts'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const dir = mkdtempSync(join(tmpdir(), 'molo-getting-started-page-'));
    let open: OpenPage | undefined;
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes('Ctrl-C stops it')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the example did not come up: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const url = /observer page: (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)![1]!;
      const app = /app node (app@127\.0\.0\.1:\d+) up/.exec(output)![1]!;
      const peer = /peer node (peer@127\.0\.0\.1:\d+) up/.exec(output)![1]!;

      const frame = await frameWhere(url, (f) => f.trees.length === 2 && f.trees.every((tree) => 'root' in tree), { timeoutMs: 15_000 });
      expect(frame.node).toBe(app);
      expect(frame.links!.map((link) => [link.name, link.state])).toEqual([
        [app, 'self'],
        [peer, 'up'],
      ]);
      const trees = new Map((frame.trees as TreeSnapshot[]).map((tree) => [tree.node, tree]));
      expect(trees.get(app)!.root!.children!.map((c) => c.id)).toEqual(['greeter', 'guest-workers', 'scheduler']);
      expect(trees.get(peer)!.root!.children!.map((c) => [c.id, c.state])).toEqual([['greeter', 'running']]);

      open = await openObserver(dir, url);
      const { page } = open;
      await page.locator(`#nodes-view tr[data-node="${peer}"] td`, { hasText: /ms$/ }).waitFor();
      await page.locator(`#nodes-view tr[data-node="${app}"]`).waitFor();
      await page.locator(`.tree[data-node="${app}"] tr[data-path="root/guest-workers"]`).waitFor();
      await page.locator(`.tree[data-node="${peer}"] tr[data-path="root/greeter"] td.state`, { hasText: 'running' }).waitFor();
      expect(open.problems).toEqual([]);
    } finally {
      await open?.context.close();
      rmSync(dir, { recursive: true, force: true });
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toMatch(/stopped \(SIGTERM, clean: true\); peer stopped too/);
  });
});

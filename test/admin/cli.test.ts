import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type Ref } from '../../src/actors/index.js';
import { AdminErrorCode, DEFAULT_ADMIN_PORT } from '../../src/admin/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { DEFAULT_ADMIN_URL, runCli, USAGE } from '../../src/cli/run.js';
import { Counter, runMolo, startTestNode } from './helpers.js';

// Each test spawns `molo` through tsx, which takes 15 s and more on a loaded machine: timeouts of 120 s.
// A window longer than any test: the restart below stays counted however slowly `molo` starts under
// load (with the default 5 s period it expired under load, and the line read "intensity left 5/5").
const spec = {
  intensity: 5,
  periodMs: 3_600_000,
  children: [
    worker('cache', () => new Counter('cache')),
    Supervisor.child('web', { children: [worker('listener', () => new Counter('listener'))] }),
  ],
};

/** runCli in-process, for the cases that need no node. */
async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

describe('molo CLI against a running node', () => {
  it('molo tree prints the tree with states and restart counts', async () => {
    const { node } = await startTestNode({ root: spec });
    const cache = (await Supervisor.whichChildren(node.system, node.root)).find((entry) => entry.id === 'cache')!.ref as Ref;
    await GenServer.call<Counter>(node.system, cache, 'crash').catch(() => {});
    await node.system.settle();

    const run = await runMolo(['tree', '--url', node.adminUrl!]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^node test {2}\(snapshot \d{4}-/);
    expect(lines[1]).toMatch(/^root \(supervisor Supervisor one_for_one\) {2}running {2}intensity left 4\/5 per 3600000 ms {2}mailbox 0\/\d+ {2}<test\./);
    expect(lines[2]).toMatch(/^├─ cache \(worker Counter\) {2}running {2}restarts 1 {2}mailbox 0\/\d+ {2}<test\./);
    expect(lines[3]).toMatch(/^└─ web \(supervisor Supervisor one_for_one\) {2}running {2}restarts 0 {2}intensity left 1\/1/);
    expect(lines[4]).toMatch(/^ {3}└─ listener \(worker Counter\) {2}running {2}restarts 0/);
    expect(lines).toHaveLength(5);
    await node.stop();
  }, 120_000);

  it('molo tree --json prints the raw snapshot; MOLO_ADMIN_URL stands in for --url', async () => {
    const { node } = await startTestNode({ root: spec });
    const run = await runMolo(['tree', '--json'], { MOLO_ADMIN_URL: node.adminUrl! });
    expect(run.code).toBe(0);
    const snapshot = JSON.parse(run.stdout) as { root: { children: { id: string }[] }; truncated: boolean };
    expect(snapshot.root.children.map((entry) => entry.id)).toEqual(['cache', 'web']);
    expect(snapshot.truncated).toBe(false);
    await node.stop();
  }, 120_000);

  it('molo ps prints a process table', async () => {
    const { node } = await startTestNode({ root: spec });
    const run = await runMolo(['ps', '--url', node.adminUrl!]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^REF\s+NAME\s+BEHAVIOUR\s+STATUS\s+MAILBOX\s+HANDLED\s+DROPPED\s+LINKS\s+MONITORS\s+PARENT$/);
    expect(lines.some((line) => /^<test\.\d+\.\d+>\s+admin\s+AdminServer\s/.test(line))).toBe(true);
    expect(lines.some((line) => /^<test\.\d+\.\d+>\s+root\s+Supervisor\s/.test(line))).toBe(true);
    expect(lines.filter((line) => line.includes(' Counter '))).toHaveLength(2);
    expect(lines.at(-1)).toBe(`${node.system.actorCount} processes`);
    await node.stop();
  }, 120_000);

  it('molo health exits 0 while healthy and 1 once the root has stopped', async () => {
    const { node } = await startTestNode({ root: spec });
    const healthy = await runMolo(['health', '--url', node.adminUrl!]);
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toMatch(/^ok {2}node test {2}root <test\.\d+\.\d+> alive {2}actors \d+/);
    await Supervisor.stop(node.system, node.root);
    const down = await runMolo(['health', '--url', node.adminUrl!]);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^down {2}node test {2}root <test\.\d+\.\d+> down/);
    await node.stop();
  }, 120_000);

  it('exits 1 when the node is unreachable and 2 on a usage error', async () => {
    const { node } = await startTestNode({ root: { children: [] } });
    const url = node.adminUrl!;
    await node.stop();
    const unreachable = await runMolo(['tree', '--url', url]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(AdminErrorCode.Unreachable);
    const usage = await runMolo(['frobnicate']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown command 'frobnicate'");
    expect(usage.stderr).toContain('usage: molo');
  }, 120_000);
});

describe('molo CLI arguments', () => {
  it('rejects bad usage with exit code 2', async () => {
    for (const argv of [[], ['tree', 'ps'], ['tree', '--bogus'], ['tree', '--url', 'not a url'], ['tree', '--url', 'ftp://x'], ['ps', '--timeout', '0']]) {
      const run = await cli(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr).toContain(USAGE);
    }
  });

  it('prints help with exit code 0', async () => {
    expect(await cli(['help'])).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    expect((await cli(['--help'])).code).toBe(0);
  });

  it('sends MOLO_ADMIN_TOKEN as a bearer token to a node that requires one', async () => {
    const token = 'cli-token-of-enough-length';
    const { node } = await startTestNode({ root: spec, admin: { port: 0, token } });
    const refused = await cli(['tree', '--url', node.adminUrl!]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ADMIN_UNAUTHORIZED');
    const served = await cli(['tree', '--url', node.adminUrl!], { MOLO_ADMIN_TOKEN: token });
    expect(served.code).toBe(0);
    expect(served.stdout).toMatch(/^node test /);
    await node.stop();
  });

  it('defaults to the admin surface default port', () => {
    expect(DEFAULT_ADMIN_URL).toBe(`http://127.0.0.1:${DEFAULT_ADMIN_PORT}`);
  });

  it('renders truncation and provider sections in the human tree', async () => {
    class PoolManager extends GenServer<'status', { db: string }> {
      override handleCall(): { db: string } {
        return { db: 'healthy' };
      }
    }
    const { node } = await startTestNode({
      root: {
        children: [
          { ...worker('pools', () => new PoolManager()), type: 'supervisor' },
          Supervisor.child('pool', {
            strategy: 'simple_one_for_one',
            children: [{ id: 'bare', start: ({ system, parent }) => system.spawn(() => {}, { link: parent }) }],
          }),
        ],
      },
      snapshotProviders: [{ behaviour: 'PoolManager', section: 'pools', describe: (system, ref) => GenServer.call<PoolManager>(system, ref, 'status') }],
      snapshot: { maxSnapshotBytes: 4_096 },
    });
    const pool = (await Supervisor.whichChildren(node.system, node.root))[1]!.ref as Ref;
    for (let i = 0; i < 60; i++) await Supervisor.startChild(node.system, pool, []);
    const run = await cli(['tree', '--url', node.adminUrl!]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/├─ pools \(supervisor PoolManager\) {2}running {2}restarts 0 {2}mailbox 0\/\d+ {2}\[pools\]/);
    expect(run.stdout).toMatch(/\n {3}└─ … \d+ more children \(snapshot cap\)\n/);
    expect(run.stdout).toMatch(/\npools:\n {2}root\/pools {2}<test\.\d+\.\d+> {2}\{"db":"healthy"\}\n/);
    expect(run.stdout).toMatch(/\ntruncated at 4096 bytes: \d+ children omitted/);
    await node.stop();
  });

  it('reports answers that are errors or not JSON as ADMIN_BAD_RESPONSE (exit 1)', async () => {
    const server = createServer((request, response) => {
      if (request.url === '/tree') {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"error":{"code":"ADMIN_SNAPSHOT_FAILED","message":"tree walk failed"}}');
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('garbage');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const tree = await cli(['tree', '--url', url]);
      expect(tree.code).toBe(1);
      expect(tree.stderr).toContain(`${AdminErrorCode.BadResponse}: unexpected answer from ${url}/tree (HTTP 500): ADMIN_SNAPSHOT_FAILED: tree walk failed`);
      const ps = await cli(['ps', '--url', url]);
      expect(ps.code).toBe(1);
      expect(ps.stderr).toContain('not JSON: garbage');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/**
 * `/nodes` and `/nodes/<name>/tree` on a cluster node's admin surface, and `molo nodes` /
 * `molo tree --node`, against nodes linked over TCP on loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Admin, clusterView, startAdminHttp, type AdminHttpServer, type NodesReport } from '../../src/admin/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { runCli } from '../../src/cli/run.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

const servers: AdminHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function get(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return runCli(argv, { stdout: (text) => void (out += text), stderr: (text) => void (err += text), env: {} }).then((code) => ({ code, out, err }));
}

describe('admin surface of a cluster node', () => {
  it('/nodes lists self, linked and gone nodes with rtt and queued bytes; /nodes/<name>/tree reads a peer through its admin actor', async () => {
    const a = await testNode('adm_a');
    const b = await testNode('adm_b');
    await Admin.start({ system: a.system });
    await Admin.start({ system: b.system });
    const sup = await Supervisor.start(b.system, { children: [{ id: 'idle', start: ({ system, parent }) => system.spawn(() => {}, { link: parent }) }] }, { name: 'root' });
    Admin.attachRoot(b.system, 'admin', sup);
    await a.connect(b.name);
    const server = await startAdminHttp({ runtime: a.system, port: 0, nodes: clusterView(a) });
    servers.push(server);

    const report = (await get(`${server.url}/nodes`)).body as NodesReport;
    expect(report.node).toBe(a.name);
    expect(report.nodes[0]).toMatchObject({ name: a.name, state: 'self' });
    const linkToB = report.nodes.find((entry) => entry.name === b.name)!;
    expect(linkToB).toMatchObject({ state: 'up', downReason: null });
    expect(linkToB.rttMs).toBeGreaterThan(0);
    expect(linkToB.rttMs).toBeLessThan(2_000);
    expect(linkToB.queuedBytes).toBeGreaterThanOrEqual(0);

    const tree = await get(`${server.url}/nodes/${encodeURIComponent(b.name)}/tree`);
    expect(tree.status).toBe(200);
    expect(tree.body.node).toBe(b.name);
    expect(tree.body.root.children.map((child: { id: string }) => child.id)).toEqual(['idle']);
    expect((await get(`${server.url}/nodes/${encodeURIComponent(a.name)}/tree`)).body.node).toBe(a.name);
    const missing = await get(`${server.url}/nodes/${encodeURIComponent('zz@127.0.0.1:9')}/tree`);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'ADMIN_NOT_FOUND']);
    expect((await get(`${server.url}/nodes/x/y`)).status).toBe(404);

    const listing = await cli(['nodes', '--url', server.url]);
    expect(listing.code).toBe(0);
    expect(listing.out).toMatch(/^NODE\s+STATE\s+RTT\s+QUEUED BYTES\s+UP SINCE$/m);
    expect(listing.out).toMatch(new RegExp(`^${b.name.replace(/\./g, '\\.')}\\s+up\\s+\\d+\\.\\d+ ms`, 'm'));
    const remoteTree = await cli(['tree', '--node', b.name, '--url', server.url]);
    expect(remoteTree.code).toBe(0);
    expect(remoteTree.out).toContain(`node ${b.name}`);
    expect(remoteTree.out).toContain('idle');
    expect((await cli(['ps', '--node', b.name, '--url', server.url])).code).toBe(2);

    await b.stop();
    await eventually(() => !a.isConnected(b.name));
    const after = (await get(`${server.url}/nodes`)).body as NodesReport;
    expect(after.nodes.find((entry) => entry.name === b.name)).toMatchObject({ state: 'down', rttMs: null, downReason: expect.any(String) });
    expect((await cli(['nodes', '--url', server.url])).out).toMatch(/down \(\w+\)/);
  });

  it('without a cluster view /nodes answers 404', async () => {
    const a = await testNode('adm_plain');
    await Admin.start({ system: a.system });
    const server = await startAdminHttp({ runtime: a.system, port: 0 });
    servers.push(server);
    const answer = await get(`${server.url}/nodes`);
    expect([answer.status, answer.body.error.code]).toEqual([404, 'ADMIN_NOT_FOUND']);
    expect((await cli(['nodes', '--url', server.url])).code).toBe(1);
  });
});

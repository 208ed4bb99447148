/**
 * A cluster node and the admin surface together, as docs/nodes.md shows them: the admin actor
 * answers `/health` 503 `starting` until it knows the root supervisor, so a cluster node gives it
 * one (`root` at start, or `Admin.attachRoot`), or runs the admin's `startNode` on its system.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Admin, ADMIN_NAME, clusterView, startAdminHttp, startNode as startAdminNode, type AdminHttpServer } from '../../src/admin/index.js';
import { Supervisor, type SupervisorSpec } from '../../src/behaviours/index.js';
import { httpGet } from '../admin/http-client.js';
import { testNode } from './support.js';

const servers: AdminHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const idleRoot: SupervisorSpec = { children: [{ id: 'idle', start: ({ system, parent }) => system.spawn(() => {}, { link: parent }) }] };

describe('a cluster node with the admin surface', () => {
  it('the admin actor alone answers /health 503 starting; Admin.attachRoot makes it 200 ok', async () => {
    const node = await testNode('health_a');
    await Admin.start({ system: node.system });
    const server = await startAdminHttp({ runtime: node.system, port: 0, nodes: clusterView(node) });
    servers.push(server);
    const before = await httpGet(`${server.url}/health`);
    expect([before.status, JSON.parse(before.body).status]).toEqual([503, 'starting']);

    const root = await Supervisor.start(node.system, idleRoot, { name: 'root' });
    Admin.attachRoot(node.system, ADMIN_NAME, root);
    const after = await httpGet(`${server.url}/health`);
    expect([after.status, JSON.parse(after.body).status]).toEqual([200, 'ok']);
    expect((await httpGet(`${server.url}/nodes`)).status).toBe(200);
  });

  it('Admin.start with root answers 200 ok from the start', async () => {
    const node = await testNode('health_b');
    const root = await Supervisor.start(node.system, idleRoot, { name: 'root' });
    await Admin.start({ system: node.system, root });
    const server = await startAdminHttp({ runtime: node.system, port: 0, nodes: clusterView(node) });
    servers.push(server);
    const health = await httpGet(`${server.url}/health`);
    expect([health.status, JSON.parse(health.body).status]).toEqual([200, 'ok']);
  });

  it("the admin's startNode runs on the cluster node's system, and stopping it leaves the cluster node up", async () => {
    const node = await testNode('health_c');
    const app = await startAdminNode({ system: node.system, root: idleRoot, admin: { port: 0 }, signals: false, logger: false });
    const health = await httpGet(`${app.adminUrl}/health`);
    expect([health.status, JSON.parse(health.body).status]).toEqual([200, 'ok']);
    const tree = JSON.parse((await httpGet(`${app.adminUrl}/tree`)).body);
    expect(tree.node).toBe(node.name);
    // startNode's surface takes no cluster view: /nodes is served by startAdminHttp with `nodes`.
    expect((await httpGet(`${app.adminUrl}/nodes`)).status).toBe(404);
    expect((await app.stop()).clean).toBe(true);
    expect(node.system.stopped).toBe(false);
  });
});

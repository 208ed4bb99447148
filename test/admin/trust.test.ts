/**
 * The admin surface checks who is asking (issue 10 §4): a `Host` that is not ours is refused (DNS
 * rebinding), a non-loopback bind without a token does not start, and with a token only the probes
 * answer without it. Plus the ops listener (issue 15): `/metrics` and the probes on a port of their
 * own, without the tree. Before: every Host was served, and a 0.0.0.0 bind only logged a warning.
 */
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { AdminInvalidOption, AdminTokenRequired, startNode } from '../../src/admin/index.js';
import { GenServer, worker } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';
import { startTestNode } from './helpers.js';
import { httpGet } from './http-client.js';

const rootSpec = { strategy: 'one_for_one' as const, children: [] };

/** Takes a while to stop, so the node stays draining long enough to be asked. */
class SlowToStop extends GenServer<never, never> {
  override init(): void {
    this.ctx.trapExit(true);
  }
  override async terminate(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
const TOKEN = 'a-token-of-enough-length';

/** An address of this machine other than loopback, when it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

describe('Host header (DNS rebinding)', () => {
  it('refuses a name that is not the bound address or configured; accepts loopback names, IP literals and allowedHosts', async () => {
    const { node } = await startTestNode({ root: rootSpec, admin: { port: 0, allowedHosts: ['admin.internal'] } });
    const port = new URL(node.adminUrl!).port;
    const rebound = await httpGet(`${node.adminUrl}/tree`, { host: `evil.example:${port}` });
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error.code).toBe('ADMIN_HOST_REFUSED');
    // Probes too: a rebinding page must learn nothing, not even health.
    expect((await httpGet(`${node.adminUrl}/health`, { host: 'evil.example' })).status).toBe(421);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, `10.1.2.3:${port}`, `admin.internal:${port}`]) {
      expect((await httpGet(`${node.adminUrl}/health`, { host })).status, host).toBe(200);
    }
    await node.stop();
  });
});

describe('token', () => {
  it('a non-loopback bind without a token is refused at start, and nothing is left running', async () => {
    const system = testSystem();
    const attempt = startNode({ system, root: rootSpec, admin: { host: '0.0.0.0', port: 0 }, signals: false, log: () => undefined });
    await expect(attempt).rejects.toBeInstanceOf(AdminTokenRequired);
    await expect(attempt).rejects.toMatchObject({ code: 'ADMIN_TOKEN_REQUIRED' });
    expect(system.registered()).toEqual([]);
    await expect(startNode({ system, root: rootSpec, admin: { port: 0, token: 'short' }, signals: false, log: () => undefined })).rejects.toBeInstanceOf(AdminInvalidOption);
    expect(system.actorCount).toBe(0);
  });

  it('with a token, every endpoint but the probes needs it', async () => {
    const { node } = await startTestNode({ root: rootSpec, admin: { host: '0.0.0.0', port: 0, token: TOKEN } });
    const url = node.adminUrl!.replace('0.0.0.0', '127.0.0.1');
    const missing = await httpGet(`${url}/tree`);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect(JSON.parse(missing.body).error.code).toBe('ADMIN_UNAUTHORIZED');
    expect((await httpGet(`${url}/tree`, { authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(401);
    expect((await httpGet(`${url}/metrics`)).status).toBe(401);
    expect((await httpGet(`${url}/tree`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    for (const probe of ['/health', '/livez', '/readyz']) expect((await httpGet(`${url}${probe}`)).status, probe).toBe(200);
    if (externalAddress !== undefined) {
      // Reached by the machine's own address: an IP literal Host, served with the token.
      expect((await httpGet(`http://${externalAddress}:${node.adminUrl!.split(':').at(-1)}/processes`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    }
    await node.stop();
  });
});

describe('probes and the ops listener', () => {
  it('/livez answers while the node runs; /readyz follows readiness and turns 503 draining on stop', async () => {
    const { node } = await startTestNode({ root: { children: [worker('slow', () => new SlowToStop())] }, admin: { port: 0, ops: { port: 0 } } });
    expect(node.opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(node.opsUrl).not.toBe(node.adminUrl);
    const ops = node.opsUrl!;
    expect(await httpGet(`${ops}/livez`)).toMatchObject({ status: 200 });
    const ready = await httpGet(`${ops}/readyz`);
    expect([ready.status, JSON.parse(ready.body)]).toEqual([200, { status: 'ok' }]);
    const metrics = await httpGet(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^molo_root_supervisor_up 1$/m);
    // The tree is not served there.
    expect((await httpGet(`${ops}/tree`)).status).toBe(404);
    expect((await httpGet(`${ops}/processes`)).status).toBe(404);
    // Draining: /readyz 503 while /livez still answers. A worker slow to stop keeps the node draining.
    const stopping = node.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const drained = await httpGet(`${ops}/readyz`);
    expect([drained.status, JSON.parse(drained.body).status]).toEqual([503, 'draining']);
    expect((await httpGet(`${ops}/livez`)).status).toBe(200);
    expect((await stopping).clean).toBe(true);
  });

  it('the ops listener may bind off loopback without a token (it serves no tree); the tree listener may not', async () => {
    const { node } = await startTestNode({ root: rootSpec, admin: { port: 0, ops: { host: '0.0.0.0', port: 0 } } });
    const ops = node.opsUrl!.replace('0.0.0.0', '127.0.0.1');
    expect((await httpGet(`${ops}/metrics`)).status).toBe(200);
    expect((await httpGet(`${ops}/health`)).status).toBe(200);
    await node.stop();
  });
});

import { describe, expect, it } from 'vitest';
import { CalleeExited, type Ref } from '../../src/actors/index.js';
import {
  AdminErrorCode,
  PROMETHEUS_CONTENT_TYPE,
  type HealthReport,
  type ProcessSnapshot,
  type TreeNode,
  type TreeSnapshot,
} from '../../src/admin/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { eventually } from '../support/systems.js';
import { Counter, getJson, startTestNode } from './helpers.js';

const child = (node: TreeNode, id: string): TreeNode => {
  const found = node.children?.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no child ${id} under ${node.path}`);
  return found;
};

const rootSpec = {
  strategy: 'one_for_one' as const,
  intensity: 3,
  periodMs: 60_000,
  children: [
    worker('cache', () => new Counter('cache')),
    Supervisor.child('web', { strategy: 'rest_for_one', children: [worker('listener', () => new Counter('listener')), worker('router', () => new Counter('router'))] }),
    worker('mailer', () => new Counter('mailer')),
  ],
};

describe('HTTP admin surface', () => {
  it('GET /tree shows supervisors, children, states and mailboxes', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    expect(node.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { status, body, headers } = await getJson<TreeSnapshot>(`${node.adminUrl}/tree`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(body.node).toBe('test');
    expect(body.truncated).toBe(false);
    expect(body.errors).toBe(0);
    const root = body.root!;
    expect(root).toMatchObject({ path: 'root', ref: String(node.root), type: 'supervisor', state: 'running' });
    expect(root.process).toMatchObject({ name: 'root', behaviour: 'Supervisor', mailboxLength: 0 });
    expect(root.supervisor).toEqual({ strategy: 'one_for_one', intensity: 3, periodMs: 60_000, restartsInWindow: 0, remainingIntensity: 3 });
    expect(root.children!.map((entry) => [entry.id, entry.type, entry.state])).toEqual([
      ['cache', 'worker', 'running'],
      ['web', 'supervisor', 'running'],
      ['mailer', 'worker', 'running'],
    ]);
    const web = child(root, 'web');
    expect(web.supervisor?.strategy).toBe('rest_for_one');
    expect(web.children!.map((entry) => entry.path)).toEqual(['root/web/listener', 'root/web/router']);
    expect(child(web, 'router')).toMatchObject({ restart: 'permanent', restartCount: 0, process: { behaviour: 'Counter', status: 'waiting' } });
    await node.stop();
  });

  it('shows restart counts and the remaining intensity after a real crash and restart', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    const before = (await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body;
    const listenerRef = child(child(before.root!, 'web'), 'listener').ref!;
    const web = (await Supervisor.whichChildren(node.system, node.root)).find((entry) => entry.id === 'web')!.ref as Ref;
    const ref = (await Supervisor.whichChildren(node.system, web)).find((entry) => entry.id === 'listener')!.ref as Ref;
    expect(String(ref)).toBe(listenerRef);

    // Crash `listener` through its own API: rest_for_one restarts it and `router` after it.
    await expect(GenServer.call<Counter>(node.system, ref, 'crash')).rejects.toBeInstanceOf(CalleeExited);
    await eventually(() => !node.system.isAlive(ref), 2_000, 'listener exit');
    await node.system.settle();

    const after = (await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body;
    const webNode = child(after.root!, 'web');
    const listener = child(webNode, 'listener');
    expect(listener.state).toBe('running');
    expect(listener.restartCount).toBe(1);
    expect(listener.ref).not.toBe(listenerRef);
    expect(child(webNode, 'router').restartCount).toBe(1);
    expect(webNode.supervisor).toMatchObject({ restartsInWindow: 1, remainingIntensity: 0 });
    // The root saw nothing: the web supervisor handled it.
    expect(after.root!.supervisor).toMatchObject({ restartsInWindow: 0, remainingIntensity: 3 });
    expect(child(after.root!, 'cache').restartCount).toBe(0);
    await node.stop();
  });

  it('GET /processes lists every live process with its mailbox', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    const { status, body } = await getJson<ProcessSnapshot>(`${node.adminUrl}/processes`);
    expect(status).toBe(200);
    expect(body.total).toBe(node.system.actorCount);
    expect(body.truncated).toBe(false);
    expect(body.processes).toHaveLength(body.total);
    const admin = body.processes.find((entry) => entry.name === 'admin');
    expect(admin).toMatchObject({ ref: String(node.admin), behaviour: 'AdminServer' });
    const root = body.processes.find((entry) => entry.name === 'root');
    expect(root).toMatchObject({ behaviour: 'Supervisor', trapExit: true, links: 3, mailboxLength: 0 });
    expect(body.processes.filter((entry) => entry.behaviour === 'Counter')).toHaveLength(4);
    await node.stop();
  });

  it('GET /metrics serves Prometheus text, built in until telemetry is wired, in telemetry\'s shape', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    const response = await fetch(`${node.adminUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    const text = await response.text();
    expect(text).toContain('# TYPE molo_actors_alive gauge');
    // The same names and labels as telemetry's RuntimeMetrics: alive actors by behaviour.
    const alive = [...text.matchAll(/^molo_actors_alive\{behaviour="([^"]+)"\} (\d+)$/gm)];
    expect(alive.map((match) => match[1])).toContain('Supervisor');
    expect(alive.reduce((sum, match) => sum + Number(match[2]), 0)).toBe(node.system.actorCount);
    expect(text).toContain('molo_root_supervisor_up 1\n');
    await node.stop();
  });

  it('GET /metrics serves the given metrics source, and a JSON 500 when it fails', async () => {
    let fail = false;
    const { node } = await startTestNode({
      root: { children: [] },
      metrics: async () => {
        if (fail) throw new Error('registry gone');
        return '# TYPE app_up gauge\napp_up 1\n';
      },
    });
    expect(await (await fetch(`${node.adminUrl}/metrics`)).text()).toBe('# TYPE app_up gauge\napp_up 1\n');
    fail = true;
    const failed = await getJson<{ error: { code: string; message: string } }>(`${node.adminUrl}/metrics`);
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe(AdminErrorCode.MetricsFailed);
    expect(failed.body.error.message).toContain('registry gone');
    await node.stop();
  });

  it('GET /health is 200 while the root supervisor lives and 503 once it has stopped', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    const up = await getJson<HealthReport>(`${node.adminUrl}/health`);
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: 'ok', node: 'test', root: String(node.root), rootAlive: true, actors: node.system.actorCount });

    await Supervisor.stop(node.system, node.root);
    const down = await getJson<HealthReport>(`${node.adminUrl}/health`);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    expect(down.body).toMatchObject({ status: 'down', rootAlive: false });
    const metrics = await (await fetch(`${node.adminUrl}/metrics`)).text();
    expect(metrics).toContain('molo_root_supervisor_up 0\n');
    // The tree says so too, rather than failing.
    const tree = (await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body;
    expect(tree.root).toMatchObject({ state: 'stopped', process: null });
    await node.stop();
  });

  it('GET /health answers 503 draining while the node stops', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    class Slow extends GenServer {
      override init(): void {
        this.ctx.trapExit(true);
      }
      override terminate(): Promise<void> {
        return gate;
      }
    }
    const { node } = await startTestNode({ root: { children: [worker('slow', () => new Slow())] } });
    const stopping = node.stop();
    const draining = await getJson<HealthReport>(`${node.adminUrl}/health`);
    expect(draining.status).toBe(503);
    expect(draining.body).toMatchObject({ status: 'draining', rootAlive: true });
    release();
    expect(await stopping).toMatchObject({ clean: true, exitCode: 0 });
  });

  it('answers unknown paths with a JSON 404 and other methods with a JSON 405', async () => {
    const { node } = await startTestNode({ root: { children: [] } });
    const missing = await getJson<{ error: { code: string } }>(`${node.adminUrl}/nope?x=1`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe(AdminErrorCode.NotFound);
    for (const method of ['POST', 'DELETE', 'HEAD']) {
      const response = await fetch(`${node.adminUrl}/tree`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET');
      if (method !== 'HEAD') expect(((await response.json()) as { error: { code: string } }).error.code).toBe(AdminErrorCode.MethodNotAllowed);
    }
    await node.stop();
  });

  it('closes the HTTP server when the node stops', async () => {
    const { node } = await startTestNode({ root: { children: [] } });
    const url = node.adminUrl!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    await node.stop();
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('reports a taken port as ADMIN_LISTEN_FAILED and leaves nothing running', async () => {
    const { node } = await startTestNode({ root: { children: [] } });
    const port = Number(new URL(node.adminUrl!).port);
    await expect(startTestNode({ root: { children: [worker('w', () => new Counter())] }, admin: { port } })).rejects.toMatchObject({
      code: AdminErrorCode.ListenFailed,
      port,
    });
    await node.stop();
  });
});

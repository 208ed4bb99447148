/**
 * A node's `/metrics` by default (issue 25), scraped from its real admin HTTP listener: Node's
 * process metrics, the runtime's (exits and crashes, supervisor restarts, mailbox depths), and the
 * task and stream metrics of the queue and store the admin serves; each metric name once.
 */
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminErrorCode, startNode, type MoloNode, type NodeOptions } from '../../src/admin/index.js';
import { GenServer, worker } from '../../src/behaviours/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { STREAM_BACKENDS } from '../bus/streams/stores.js';
import { eventually, testSystem } from '../support/systems.js';

class Fragile extends GenServer<never, never, 'crash'> {
  override handleCast(message: 'crash'): void {
    if (message === 'crash') throw new Error('boom');
  }
}

const tasks = TASK_BACKENDS.find((b) => b.name === 'sqlite')!;
const streams = STREAM_BACKENDS.find((b) => b.name === 'sqlite')!;
beforeAll(() => tasks.setup(), 30_000);
afterAll(() => tasks.teardown());

async function scrape(node: MoloNode): Promise<string> {
  const response = await fetch(`${node.adminUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Every `# TYPE` name once: Prometheus refuses an exposition that declares a metric twice. */
function expectEachMetricOnce(text: string): void {
  const types = [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
  expect(types.filter((name, at) => types.indexOf(name) !== at)).toEqual([]);
}

async function node(options: Omit<NodeOptions, 'admin' | 'signals'> & { admin?: NodeOptions['admin'] }): Promise<MoloNode> {
  return startNode({ logger: false, signals: false, ...options, admin: { port: 0, ...(options.admin || {}) } });
}

describe('a node’s default /metrics', () => {
  it('serves process, runtime (crashes, restarts, mailboxes), task and stream metrics from a system startNode creates', async () => {
    const queue = await tasks.open();
    const store = await streams.open();
    const started = await node({ root: { children: [worker('fragile', () => new Fragile(), { server: { name: 'fragile' } })] }, admin: { port: 0, tasks: queue, streams: store } });
    try {
      await queue.createQueue('jobs');
      await queue.enqueue('jobs', { name: 'one' });
      await queue.lease('jobs', 1);
      await store.createStream('events');
      await store.publish('events', Buffer.from('x'));
      const before = started.system.whereis('fragile')!;
      GenServer.cast(started.system, 'fragile', 'crash');
      await eventually(() => started.system.whereis('fragile') !== undefined && started.system.whereis('fragile') !== before, 5_000, 'restarted');
      const text = await scrape(started);
      expectEachMetricOnce(text);
      // Node's process metrics, on by default.
      expect(value(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
      // What only an observer sees: the crash and the restart.
      expect(value(text, 'molo_actor_exits_total{reason="error"}')).toBe(1);
      expect(value(text, 'molo_supervisor_restarts_total{supervisor="root",child="fragile"}')).toBe(1);
      expect(value(text, 'molo_supervisor_events_total{event="child_restarted"}')).toBe(1);
      expect(value(text, 'molo_mailbox_depth_max{behaviour="Fragile"}')).toBe(0);
      expect(value(text, 'molo_actors_alive{behaviour="Fragile"}')).toBe(1);
      expect(value(text, 'molo_root_supervisor_up')).toBe(1);
      // The admin's queue and store, attached though they were opened without a registry.
      expect(value(text, 'molo_task_transitions_total{queue="jobs",from="queued",to="leased"}')).toBe(1);
      expect(value(text, 'molo_stream_published_total{store="streams",stream="events"}')).toBe(1);
    } finally {
      await started.stop();
      await queue.close();
      await store.close();
    }
  });

  it('on a given system without telemetry: sampled runtime gauges, process metrics and the registries named; process metrics can be left out', async () => {
    const registry = new Registry();
    new Counter({ name: 'app_orders_total', help: 'Orders.', registers: [registry] }).inc(3);
    const system = testSystem();
    const started = await node({ system, root: { children: [] }, metrics: { registries: [registry] } });
    try {
      const text = await scrape(started);
      expectEachMetricOnce(text);
      expect(value(text, 'app_orders_total')).toBe(3);
      expect(value(text, 'molo_root_supervisor_up')).toBe(1);
      expect(value(text, 'molo_mailbox_messages{behaviour="Supervisor"}')).toBe(0);
      expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    } finally {
      await started.stop();
    }
    const lean = await node({ system: testSystem(), root: { children: [] }, metrics: { process: false } });
    try {
      const text = await scrape(lean);
      expect(text).not.toContain('process_cpu_user_seconds_total');
      expect(value(text, 'molo_root_supervisor_up')).toBe(1);
    } finally {
      await lean.stop();
    }
  });

  it('refuses an unknown metrics option with the nearest key', async () => {
    await expect(node({ root: { children: [] }, metrics: { proces: false } as never })).rejects.toMatchObject({ code: AdminErrorCode.InvalidOption, message: expect.stringContaining('metrics.proces') });
  });
});

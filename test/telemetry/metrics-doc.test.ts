import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { taskMetrics } from '../../src/bus/tasks/metrics.js';
import { topicMetrics } from '../../src/bus/topics/metrics.js';
import { schedulerMetrics } from '../../src/bus/scheduler/metrics.js';
import { CacheMetrics } from '../../src/data/cache/metrics.js';
import { dataMetrics } from '../../src/data/metrics.js';
import { ormMetrics } from '../../src/data/orm/metrics.js';
import { pgMetrics } from '../../src/data/pg/metrics.js';
import { builtinMetrics } from '../../src/admin/builtin-metrics.js';
import { Admin, startAdminHttp } from '../../src/admin/index.js';
import { nodeMetrics } from '../../src/nodes/metrics.js';
import { clusterMetrics } from '../../src/nodes/cluster-metrics.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { createTelemetry, RuntimeMetrics } from '../../src/telemetry/index.js';
import { testSystem } from '../support/systems.js';

const DOC = readFileSync(new URL('../../docs/telemetry.md', import.meta.url), 'utf8');
/** Registered lazily, on the first heal (src/data/orm/heal/healer.ts). */
const LAZY = ['molo_orm_heals_total{plan,result}'];

/** `name{label,label}` of every metric in the registry, as the doc writes them. */
function documented(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((metric) => {
    const labels = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    return labels.length === 0 ? metric.name : `${metric.name}{${labels.join(',')}}`;
  });
}

describe('docs/telemetry.md lists every metric with its labels', () => {
  it('holds the table to the registries of every area', () => {
    const registry = new Registry();
    new RuntimeMetrics({ registry });
    dataMetrics(registry);
    new CacheMetrics(registry, 'doc');
    ormMetrics(registry);
    pgMetrics(registry);
    topicMetrics(registry);
    taskMetrics(registry);
    schedulerMetrics(registry);
    nodeMetrics(registry);
    clusterMetrics(registry);
    const names = [...documented(registry), ...LAZY];
    const inDoc = [...DOC.matchAll(/^\| `(molo_[a-z_]+(?:\{[a-z,]+\})?)` \|/gm)].map((match) => match[1]);
    expect(names.filter((name) => !inDoc.includes(name)), 'registered but not documented').toEqual([]);
    expect(inDoc.filter((name) => !names.includes(name!)), 'documented but not registered').toEqual([]);
  });

  it('processMetrics adds Node process metrics to the same registry; off by default', async () => {
    const withProcess = new RuntimeMetrics({ processMetrics: true });
    const text = await withProcess.metricsText();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(await new RuntimeMetrics().metricsText()).not.toContain('process_cpu_user_seconds_total');
  });
});

describe('metrics keep one shape with or without telemetry', () => {
  const pick = (text: string): string[] => text.split('\n').filter((line) => /^(# (HELP|TYPE) )?molo_(actors_alive|root_supervisor_up)\b/.test(line));

  it('molo_actors_alive{behaviour} and molo_root_supervisor_up read the same from telemetry and from the built-in source', async () => {
    const telemetry = createTelemetry({ logger: false, metrics: true });
    const system = testSystem({ ...telemetry.systemOptions });
    const root = await Supervisor.start(system, { children: [] }, { name: 'root' });
    const builtin = builtinMetrics(system, 'root');
    const withTelemetry = pick(await telemetry.metricsText());
    expect(withTelemetry).toContain('molo_root_supervisor_up 1');
    expect(withTelemetry).toContain('molo_actors_alive{behaviour="Supervisor"} 1');
    expect(withTelemetry.sort()).toEqual(pick(await builtin()).sort());
    await Supervisor.stop(system, root);
    expect(pick(await telemetry.metricsText())).toContain('molo_root_supervisor_up 0');
    expect(pick(await builtin())).toContain('molo_root_supervisor_up 0');
  });

  it('the admin HTTP surface without a metrics source serves the same shape (no {node} label)', async () => {
    const telemetry = createTelemetry({ logger: false, metrics: true });
    const system = testSystem({ ...telemetry.systemOptions });
    const root = await Supervisor.start(system, { children: [] }, { name: 'root' });
    const admin = await Admin.start({ system, root });
    const http = await startAdminHttp({ runtime: system, admin, port: 0 });
    try {
      const served = pick(await (await fetch(`${http.url}/metrics`)).text());
      expect(served).toContain('molo_root_supervisor_up 1');
      expect(served.join('\n')).not.toContain('node=');
      expect(served.sort()).toEqual(pick(await telemetry.metricsText()).sort());
      await Supervisor.stop(system, root);
      expect(pick(await (await fetch(`${http.url}/metrics`)).text())).toContain('molo_root_supervisor_up 0');
    } finally {
      await http.close();
      await Admin.stop(system, admin);
    }
  });
});

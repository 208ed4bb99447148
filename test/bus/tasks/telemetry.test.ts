/**
 * The task queue's telemetry (R7-6): every state change is a debug log line, an event and a count
 * in `molo_task_transitions_total`; lease expiries, depth, dead letters and in-flight are metrics;
 * each run is a span.
 */
import { trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { startTaskWorkers, TaskSpanName } from '../../../src/bus/index.js';
import { silentLogger, type Logger } from '../../../src/telemetry/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { RecordingTracerProvider } from '../../telemetry/helpers.js';
import { TASK_BACKENDS } from './stores.js';

const backend = TASK_BACKENDS.find((b) => b.name === 'sqlite')!;
const provider = new RecordingTracerProvider();

beforeAll(async () => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
  await backend.setup();
}, 30_000);
afterAll(async () => {
  trace.disable();
  await backend.teardown();
});

function metricValue(text: string, line: string): number {
  return Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
}

describe('task telemetry', () => {
  it('logs, emits and counts every state change; counts expiries; gauges depth and dead letters', async () => {
    const registry = new Registry();
    const clock = new SimulatedClock();
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { ...silentLogger, debug: ((fields: object | string) => void lines.push(fields as Record<string, unknown>)) as Logger['debug'] };
    const events: string[] = [];
    const queue = await backend.open(clock, { metrics: registry, logger, events: { transition: (e) => events.push(`${e.id}:${e.from}>${e.to}`) } });
    await queue.createQueue('q', { leaseMs: 1_000, heartbeatMs: 250 });
    const { id } = await queue.enqueue('q', { name: 'a', maxRetries: 0 });
    await queue.lease('q', 1);
    clock.advance(1_001);
    expect(await queue.expireLeases('q')).toBe(1);
    await queue.enqueue('q', { name: 'b' });
    await queue.queueInfo('q');
    const text = await registry.metrics();
    expect(metricValue(text, 'molo_task_transitions_total{queue="q",from="queued",to="leased"}')).toBe(1);
    expect(metricValue(text, 'molo_task_transitions_total{queue="q",from="leased",to="failed-permanent"}')).toBe(1);
    expect(metricValue(text, 'molo_task_transitions_total{queue="q",from="failed-permanent",to="dead-lettered"}')).toBe(1);
    expect(metricValue(text, 'molo_task_lease_expiries_total{queue="q"}')).toBe(1);
    expect(metricValue(text, 'molo_task_queue_depth{queue="q"}')).toBe(1);
    expect(metricValue(text, 'molo_task_dead_letters{queue="q"}')).toBe(1);
    expect(events).toEqual([`${id}:queued>leased`, `${id}:leased>failed-permanent`, `${id}:failed-permanent>dead-lettered`]);
    expect(lines.filter((line) => line.event === 'task.transition').map((line) => [line.id, line.from, line.to, line.reason])).toEqual([
      [id, 'queued', 'leased', undefined],
      [id, 'leased', 'failed-permanent', 'max-retries'],
      [id, 'failed-permanent', 'dead-lettered', 'max-retries'],
    ]);
    await queue.close();
  });

  it('a span per run, ended with its outcome; in-flight gauged while handlers run', async () => {
    const registry = new Registry();
    const system = testSystem();
    const queue = await backend.open(undefined, { metrics: registry });
    await queue.createQueue('q');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pool = await startTaskWorkers(system, queue, {
      queue: 'q',
      pollMs: 10,
      concurrency: 2,
      executor: { placement: 'loop', handlers: { wait: () => gate, boom: () => Promise.reject(new Error('boom')) } },
    });
    await queue.enqueue('q', { name: 'wait' });
    await eventually(() => pool.stats().running === 1, 5_000, 'running');
    expect(metricValue(await registry.metrics(), 'molo_task_in_flight{queue="q"}')).toBe(1);
    release();
    await queue.enqueue('q', { name: 'boom', maxRetries: 0 });
    await eventually(() => pool.stats().succeeded === 1 && pool.stats().failed === 1, 5_000, 'both done');
    await pool.stop(1_000);
    const spans = provider.ended(TaskSpanName.run);
    expect(spans.map((span) => span.attributes['molo.task.name']).sort()).toEqual(['boom', 'wait']);
    expect(spans.map((span) => span.attributes['molo.task.outcome']).sort()).toEqual(['failed', 'succeeded']);
    expect(metricValue(await registry.metrics(), 'molo_task_in_flight{queue="q"}')).toBe(0);
    await queue.close();
  });
});

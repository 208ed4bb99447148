/**
 * The scheduler's telemetry (SQLite): a fire and a refused fire as spans (through a provider
 * registered with @opentelemetry/api), log events and metrics.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFence, SchedulerSpanName } from '../../../src/bus/index.js';
import { createLogger } from '../../../src/telemetry/index.js';
import { logCapture, RecordingTracerProvider } from '../../telemetry/helpers.js';
import { TASK_BACKENDS } from '../tasks/stores.js';
import { harness } from './harness.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;
const provider = new RecordingTracerProvider();

describe('scheduler telemetry', () => {
  beforeAll(async () => {
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    await sqlite.setup();
  }, 30_000);
  afterAll(async () => {
    trace.disable();
    await sqlite.teardown();
  });

  it('a fire and a refused fire: spans, log events, metrics', async () => {
    const metrics = new Registry();
    const capture = logCapture();
    const h = await harness(sqlite, { metrics }, { logger: createLogger({ destination: capture.stream, level: 'debug' }) });
    try {
      await h.lead();
      const { token } = await h.scheduler.status();
      await h.scheduler.add({ id: 'a', queue: 'q', task: { name: 'a' }, schedule: { kind: 'at', runAt: h.clock.wallNow() + 500 } });
      await h.step();
      await h.scheduler.add({ id: 'b', queue: 'q', task: { name: 'b' }, schedule: { kind: 'at', runAt: h.clock.wallNow() + 500 } });
      await sqlite.db.transaction((tx) => checkFence(tx, `scheduler:${h.name}`, token! + 1));
      await h.step();

      const spans = provider.ended(SchedulerSpanName.fire);
      expect(spans.map((span) => [span.attributes['molo.schedule.id'], span.status.code])).toEqual([
        ['a', SpanStatusCode.UNSET],
        ['b', SpanStatusCode.ERROR],
      ]);
      expect(spans[0]!.attributes).toMatchObject({ 'molo.scheduler': h.name, 'molo.task.queue': 'q', 'molo.fencing_token': token, 'molo.task.id': expect.any(String) });
      expect(spans[1]!.exceptions).toHaveLength(1);
      expect(spans[1]!.status.message).toContain('StaleFencingToken');

      const events = capture.records().map((record) => [record.event, record.level]);
      expect(events).toEqual(expect.arrayContaining([['lease.elected', 30], ['scheduler.leading', 30], ['scheduler.fired', 20], ['scheduler.fire_refused', 40]]));
      const refused = capture.records().find((record) => record.event === 'scheduler.fire_refused')!;
      expect(refused).toMatchObject({ scheduler: h.name, schedule: 'b', token, highest: token! + 1 });

      const text = await metrics.metrics();
      expect(text).toContain(`molo_scheduler_fires_total{scheduler="${h.name}"} 1`);
      expect(text).toContain(`molo_scheduler_refused_total{scheduler="${h.name}"} 1`);
      expect(text).toContain(`molo_scheduler_leader{scheduler="${h.name}"} 0`);
    } finally {
      await h.close();
    }
  }, 30_000);
});

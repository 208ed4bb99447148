import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { GenServer } from '../../src/behaviours/index.js';
import { createTelemetry, SpanName } from '../../src/telemetry/index.js';
import { testSystem } from '../support/systems.js';
import { RecordingTracerProvider } from './helpers.js';

class Echo extends GenServer<string, string> {
  override handleCall(request: string): string {
    return request;
  }
}

describe('tracing without an SDK', () => {
  it('hands the kernel no span, so calls run unwrapped', async () => {
    trace.disable();
    const telemetry = createTelemetry({ logger: false, tracing: true });
    expect(telemetry.startSpan).toBeTypeOf('function');
    expect(telemetry.startSpan!(SpanName.call, { 'molo.callee': 'x' })).toBeUndefined();
    const system = testSystem({ ...telemetry.systemOptions });
    const server = await GenServer.start(system, () => new Echo());
    expect(await GenServer.call(system, server, 'hello')).toBe('hello');
    await GenServer.stop(system, server);
  });
});

describe('tracing with an SDK registered after the telemetry was made', () => {
  it('picks the SDK up through the API proxy', async () => {
    const telemetry = createTelemetry({ logger: false, tracing: true });
    const system = testSystem({ ...telemetry.systemOptions });
    const server = await GenServer.start(system, () => new Echo());
    expect(await GenServer.call(system, server, 'before')).toBe('before');
    expect(telemetry.tracer!.active).toBe(false);
    const provider = new RecordingTracerProvider();
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      expect(telemetry.tracer!.active).toBe(true);
      expect(await GenServer.call(system, server, 'after')).toBe('after');
      expect(provider.ended(SpanName.call)).toHaveLength(1);
    } finally {
      trace.disable();
    }
    await GenServer.stop(system, server);
  });
});

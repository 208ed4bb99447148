import { SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CalleeExited, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { createTelemetry, SpanName, TRACER_NAME } from '../../src/telemetry/index.js';
import { eventually, testSystem } from '../support/systems.js';
import { RecordingTracerProvider } from './helpers.js';

class Fragile extends GenServer<'crash' | 'ping', string> {
  override handleCall(request: 'crash' | 'ping'): string {
    if (request === 'crash') throw new Error('boom');
    return 'pong';
  }
}

async function childRef(system: ReturnType<typeof testSystem>, supervisor: Ref, id: string): Promise<Ref> {
  const entry = (await Supervisor.whichChildren(system, supervisor)).find((child) => child.id === id);
  if (entry === undefined || typeof entry.ref !== 'object') throw new Error(`child ${id} is not running`);
  return entry.ref;
}

// A real registration through @opentelemetry/api: the provider stands in for an SDK.
const provider = new RecordingTracerProvider();
beforeAll(() => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
});
afterAll(() => trace.disable());
beforeEach(() => {
  provider.spans.length = 0;
});

describe('tracing', () => {
  it('wraps a call in a span that ends with the reply', async () => {
    const system = testSystem({ ...createTelemetry({ logger: false, tracing: true }).systemOptions });
    const server = await GenServer.start(system, () => new Fragile(), { name: 'fragile' });
    expect(await GenServer.call(system, server, 'ping')).toBe('pong');
    expect(await GenServer.call(system, 'fragile', 'ping')).toBe('pong');

    const calls = provider.ended(SpanName.call);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({
      tracer: TRACER_NAME,
      attributes: { 'molo.callee': server.toString(), 'molo.node': 'test' },
      status: { code: SpanStatusCode.UNSET },
    });
    expect(calls[1]!.attributes['molo.callee']).toBe('fragile');
    expect(provider.spans.every((span) => span.ended)).toBe(true);
    await GenServer.stop(system, server);
  });

  it('marks a failed call span as an error with the exception', async () => {
    const system = testSystem({ ...createTelemetry({ logger: false, tracing: true }).systemOptions });
    const server = await GenServer.start(system, () => new Fragile());
    const failure = await GenServer.call(system, server, 'crash').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CalleeExited);
    const [span] = provider.ended(SpanName.call);
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.exceptions).toEqual([failure]);
  });

  it('wraps a supervisor restart in a span', async () => {
    const system = testSystem({ ...createTelemetry({ logger: false, tracing: true }).systemOptions });
    const supervisor = await Supervisor.start(system, { children: [worker('fragile', () => new Fragile())] });
    await expect(GenServer.call(system, await childRef(system, supervisor, 'fragile'), 'crash')).rejects.toBeInstanceOf(CalleeExited);
    await eventually(() => provider.ended(SpanName.restart).length === 1, 5_000, 'the restart span');

    const [restart] = provider.ended(SpanName.restart);
    expect(restart).toMatchObject({
      tracer: TRACER_NAME,
      attributes: {
        'molo.supervisor': supervisor.toString(),
        'molo.child.id': 'fragile',
        'molo.exit.reason': 'Error: boom',
        'molo.restart.retry': false,
        'molo.child.restart_count': 1,
        'molo.child.running': true,
        'molo.child.state': 'running',
      },
      status: { code: SpanStatusCode.UNSET },
    });
    await Supervisor.stop(system, supervisor);
  });

  it('opens no span when tracing is off, even with an SDK registered', async () => {
    const telemetry = createTelemetry({ logger: false, metrics: true });
    expect(telemetry.startSpan).toBeUndefined();
    const system = testSystem({ ...telemetry.systemOptions });
    const server = await GenServer.start(system, () => new Fragile());
    expect(await GenServer.call(system, server, 'ping')).toBe('pong');
    await GenServer.stop(system, server);
    expect(provider.spans).toEqual([]);
  });
});

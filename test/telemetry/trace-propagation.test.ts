/**
 * Trace context follows the work (issue 25), checked with the real OpenTelemetry SDK
 * (BasicTracerProvider and its InMemorySpanExporter, registered through the API): a task's run is
 * the child of its enqueue on both stores, a stream delivery the child of its publish, and the
 * callee's side of a call between two real nodes the child of the caller's `molo.call`.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallRequest, Ref } from '../../src/actors/index.js';
import { GenServer } from '../../src/behaviours/index.js';
import { parseEnvelope, startTaskWorkers, StreamConsumer, StreamSpanName, TaskSpanName, type Delivery } from '../../src/bus/index.js';
import { NodeSpanName } from '../../src/nodes/trace-frames.js';
import { createTelemetry, parseCarrier, SpanName } from '../../src/telemetry/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { STREAM_BACKENDS } from '../bus/streams/stores.js';
import { testNode } from '../nodes/support.js';
import { eventually, testSystem } from '../support/systems.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(async () => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
  await Promise.all([...TASK_BACKENDS.map((b) => b.setup())]);
}, 30_000);
afterAll(async () => {
  trace.disable();
  await Promise.all(TASK_BACKENDS.map((b) => b.teardown()));
});
beforeEach(() => exporter.reset());

const ended = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);

/** Asserts `child` is a child of `parent`: same trace, parent span id the parent's. */
function expectChildOf(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

describe.each(TASK_BACKENDS.map((b) => [b.name, b] as const))('a task on %s', (_name, backend) => {
  it('runs in a span whose parent is its enqueue span, the context stored in its envelope', async () => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('q');
    // Two tasks, each enqueued under its own span: each run must name its own enqueue, not the other's.
    const first = await queue.enqueue('q', { name: 'work', payload: { n: 1 } });
    const second = await queue.enqueue('q', { name: 'work', payload: { n: 2 } });
    const stored = await queue.list('q');
    expect(stored.map((task) => task.envelope.trace_context?.traceparent)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/), expect.stringMatching(/^00-/)]),
    );
    const pool = await startTaskWorkers(system, queue, { queue: 'q', pollMs: 10, executor: { placement: 'loop', handlers: { work: () => undefined } } });
    try {
      await eventually(() => ended(TaskSpanName.run).length === 2, 10_000, 'two run spans');
      const enqueues = ended(TaskSpanName.enqueue);
      expect(enqueues.map((span) => span.attributes['molo.task.id'])).toEqual([first.id, second.id]);
      for (const run of ended(TaskSpanName.run)) {
        const enqueue = enqueues.find((span) => span.attributes['molo.task.id'] === run.attributes['molo.task.id'])!;
        expectChildOf(run, enqueue);
        expect(run.status.code).not.toBe(SpanStatusCode.ERROR);
      }
      // Distinct enqueues are distinct traces: the link is per task, not "the last span".
      expect(enqueues[0]!.spanContext().traceId).not.toBe(enqueues[1]!.spanContext().traceId);
    } finally {
      await pool.stop();
      await queue.close();
    }
  });
});

describe('a stream message', () => {
  const backend = STREAM_BACKENDS.find((b) => b.name === 'sqlite')!;

  it('is delivered in a span whose parent is its publish span, the context in its headers', async () => {
    const system = testSystem();
    const store = await backend.open(undefined, { pollIntervalMs: 50 });
    const seen: Delivery[] = [];
    try {
      await store.createStream('t');
      const ref = await StreamConsumer.start(system, { store, stream: 't', consumer: 'c', handler: (delivery) => void seen.push(delivery) });
      await store.publish('t', Buffer.from('x'), { headers: { mine: 'kept' } });
      await store.publish('t', Buffer.from('y'));
      await eventually(() => ended(StreamSpanName.deliver).length === 2, 5_000, 'deliver spans');
      const publishes = ended(StreamSpanName.publish);
      for (const deliver of ended(StreamSpanName.deliver)) {
        const publish = publishes.find((span) => span.attributes['messaging.message.id'] === deliver.attributes['messaging.message.id'])!;
        expectChildOf(deliver, publish);
      }
      expect(seen[0]!.headers).toMatchObject({ mine: 'kept', traceparent: expect.stringMatching(/^00-/) });
      // A traceparent of the publisher's own (relayed from elsewhere) parents the publish span, and is replaced by it.
      const relayed = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await store.publish('t', Buffer.from('z'), { headers: { traceparent: relayed } });
      await eventually(() => ended(StreamSpanName.deliver).length === 3, 5_000, 'third deliver span');
      const third = ended(StreamSpanName.publish).find((span) => span.attributes['messaging.message.id'] === 3)!;
      expect(third.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
      expect(third.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(seen[2]!.headers!.traceparent).toBe(`00-${third.spanContext().traceId}-${third.spanContext().spanId}-01`);
      await GenServer.stop(system, ref, 'shutdown');
    } finally {
      await store.close();
    }
  });
});

describe('a call to another node', () => {
  it("is handled there in a span whose parent is the caller's molo.call span", async () => {
    const traced = createTelemetry({ logger: false, tracing: true }).systemOptions;
    const a = await testNode('a', { system: traced });
    const b = await testNode('b', { system: traced });
    await a.connect(b.name);
    const spawned = b.system.spawn((message) => {
      if (message instanceof CallRequest) message.reply(message.request);
    });
    // Rebuilt from its parts, as a ref from another process is: the ref spawn returned would reach
    // the actor's cell directly, both nodes being in this process, and never cross the link.
    const echo = new Ref(spawned.node, spawned.id, spawned.creation);
    const sent = a.stats().bytesSent;
    // The message itself arrives unwrapped: the context travels beside it, not in it.
    expect(await a.system.call(echo, { hello: 'b' })).toEqual({ hello: 'b' });
    expect(a.stats().bytesSent).toBeGreaterThan(sent);
    await eventually(() => ended(NodeSpanName.receive).length === 1, 5_000, 'receive span');
    const [receive] = ended(NodeSpanName.receive);
    const calls = ended(SpanName.call);
    // The call to the echo actor (each node's own supervisor calls, starting its link's actor, are spans too).
    const toEcho = (node: string) => (span: ReadableSpan): boolean => span.attributes['molo.node'] === node && span.attributes['molo.callee'] === String(echo);
    const caller = calls.find(toEcho(a.name))!;
    expect(caller).toBeDefined();
    expectChildOf(receive!, caller);
    expect(receive!.attributes).toMatchObject({ 'molo.node': b.name, 'molo.peer': a.name, 'molo.frame': 'call' });
    // The call b serves for a opens there inside the receive span: one trace from caller to callee.
    const served = calls.find(toEcho(b.name))!;
    expect(served).toBeDefined();
    expectChildOf(served, receive!);
  });

  it('a plain send carries no context when no span is current', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await a.connect(b.name);
    const got: unknown[] = [];
    const spawned = b.system.spawn((message) => void got.push(message));
    const sent = a.stats().bytesSent;
    a.system.send(new Ref(spawned.node, spawned.id, spawned.creation), 'hi');
    await eventually(() => got.length === 1, 5_000, 'delivered');
    expect(got).toEqual(['hi']);
    expect(a.stats().bytesSent).toBeGreaterThan(sent);
    expect(ended(NodeSpanName.receive)).toHaveLength(0);
  });
});

describe('without a recording span', () => {
  it('stores no context: envelopes and headers are what they were, and nothing is wrapped', async () => {
    trace.disable();
    try {
      const queue = await TASK_BACKENDS[0]!.open();
      await queue.createQueue('q');
      await queue.enqueue('q', { name: 'plain' });
      const [task] = await queue.list('q');
      expect(task!.envelope).not.toHaveProperty('trace_context');
      await queue.close();
      const a = await testNode('a', { system: createTelemetry({ logger: false, tracing: true }).systemOptions });
      const b = await testNode('b');
      await a.connect(b.name);
      const spawned = b.system.spawn((message) => {
        if (message instanceof CallRequest) message.reply(message.request instanceof Object ? message.request.constructor.name : typeof message.request);
      });
      // The callee sees the request itself (a plain object), not a wrapper.
      expect(await a.system.call(new Ref(spawned.node, spawned.id, spawned.creation), { x: 1 })).toBe('Object');
    } finally {
      expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('a stored or received context', () => {
  const valid = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=1' };
  const envelope = { id: '0190b2c4-5d6e-7f00-8a00-000000000001', name: 'n', payload: {}, attempts: 0, max_retries: 1, run_at: null, timeout_soft_ms: 1, timeout_hard_ms: 1, idempotency_key: null, enqueued_at: '2026-01-01T00:00:00.000Z' };

  it('is checked: a malformed traceparent means no parent, never a failure', () => {
    expect(parseCarrier(valid)).toEqual(valid);
    expect(parseCarrier({ traceparent: valid.traceparent, tracestate: 'x'.repeat(513) })).toEqual({ traceparent: valid.traceparent });
    for (const traceparent of ['01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01', 42]) {
      expect(parseCarrier({ traceparent }), String(traceparent)).toBeUndefined();
    }
    expect(parseEnvelope({ ...envelope, trace_context: valid }).trace_context).toEqual(valid);
    expect(parseEnvelope({ ...envelope, trace_context: { traceparent: 'garbage' } })).not.toHaveProperty('trace_context');
    expect(parseEnvelope(envelope)).not.toHaveProperty('trace_context');
  });
});

/**
 * The task envelope (S7-1): the JSON the queue stores and hands to workers. Its defaults live here,
 * and every envelope is validated once, at the boundary (`createEnvelope` for an enqueue,
 * `parseEnvelope` for one read back or received as JSON); code past it sees only the resolved shape.
 */
import { V7Generator } from 'uuidv7';
import { systemClock, type Clock } from '../../actors/index.js';
import { parseCarrier, type TraceCarrier } from '../../telemetry/index.js';
import { TASK_CAPS } from './caps.js';
import { InvalidTaskEnvelope, TaskPayloadTooLarge, TaskQueueDepthExceeded } from './errors.js';

export { TASK_CAPS };

/** A JSON value: what a payload may hold. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** The envelope exactly as S7-1 spells it (snake_case: it is also the on-disk format). */
export interface TaskEnvelope {
  /** A UUID version 7 (RFC 9562): time-ordered, so ids sort by enqueue time. */
  readonly id: string;
  readonly name: string;
  readonly payload: JsonValue;
  /** Failed runs so far (see the task lifecycle). */
  readonly attempts: number;
  readonly max_retries: number;
  /** When the task may run first (ISO 8601, UTC), or null: at once. */
  readonly run_at: string | null;
  readonly timeout_soft_ms: number;
  readonly timeout_hard_ms: number;
  /** A second enqueue with this key within 24 h returns the first task's id; null: none. */
  readonly idempotency_key: string | null;
  readonly enqueued_at: string;
  /**
   * The W3C trace context of the enqueue's span, so the run's span is its child; absent when
   * nothing traced the enqueue (no tracer provider registered).
   */
  readonly trace_context?: TraceCarrier;
}

/** What an enqueue says; everything but `name` has a default. */
export interface TaskInput {
  readonly name: string;
  readonly payload?: JsonValue;
  /** Default 5, at most 100. */
  readonly maxRetries?: number;
  /** A Date, epoch milliseconds or an ISO 8601 string; default: at once. */
  readonly runAt?: Date | number | string | null;
  /** Default 30,000 ms (the handler's AbortSignal fires), 1 ms..24 h. */
  readonly timeoutSoftMs?: number;
  /** Default 60,000 ms (the worker's host is recycled), soft..24 h. */
  readonly timeoutHardMs?: number;
  /** 1..255 characters. */
  readonly idempotencyKey?: string | null;
}

export const TASK_DEFAULTS = Object.freeze({
  maxRetries: 5,
  timeoutSoftMs: 30_000,
  timeoutHardMs: 60_000,
  /** A duplicate idempotency key within this window returns the existing task. */
  idempotencyWindowMs: 24 * 60 * 60 * 1_000,
  /** Lease (ack deadline) of a taken task, and how often a worker renews it (S7-3). */
  leaseMs: 60_000,
  heartbeatMs: 15_000,
});

const NAME = /^[A-Za-z0-9_.:-]+$/;
const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface EnvelopeOptions {
  /** Stamps `enqueued_at` and the id's time; default the system clock. */
  readonly clock?: Clock;
  /** Payload cap for this queue, at most the 1 MiB cap. */
  readonly maxPayloadBytes?: number;
  /** The enqueue span's context, stored as `trace_context`. */
  readonly trace?: TraceCarrier | undefined;
}

/** One generator per process keeps ids strictly increasing even within one millisecond (RFC 9562 method 1). */
const ids = new V7Generator();

/** A fresh UUIDv7 whose timestamp is `clock`'s wall time, so a simulated clock orders ids too. */
export function newTaskId(clock: Clock = systemClock): string {
  // A clock that went back up to 10 s keeps the generator's counter going rather than reusing a time.
  return ids.generateOrResetCore(Math.floor(clock.wallNow()), 10_000).toString();
}

/** Validates an enqueue and resolves it into a frozen envelope with a new id, attempts 0. */
export function createEnvelope(input: TaskInput, options: EnvelopeOptions = {}): TaskEnvelope {
  if (typeof input !== 'object' || input === null) throw new InvalidTaskEnvelope('input', 'must be an object');
  const clock = options.clock ?? systemClock;
  const maxRetries = integerField('max_retries', input.maxRetries, TASK_DEFAULTS.maxRetries, 0, TASK_CAPS.maxRetries);
  const soft = integerField('timeout_soft_ms', input.timeoutSoftMs, TASK_DEFAULTS.timeoutSoftMs, 1, TASK_CAPS.maxTimeoutMs);
  const hard = integerField('timeout_hard_ms', input.timeoutHardMs, Math.max(TASK_DEFAULTS.timeoutHardMs, soft), soft, TASK_CAPS.maxTimeoutMs);
  const payload = input.payload ?? {};
  checkPayload(payload, options.maxPayloadBytes);
  const envelope: TaskEnvelope = {
    id: newTaskId(clock),
    name: checkName(input.name),
    payload,
    attempts: 0,
    max_retries: maxRetries,
    run_at: input.runAt === undefined || input.runAt === null ? null : isoField('run_at', input.runAt),
    timeout_soft_ms: soft,
    timeout_hard_ms: hard,
    idempotency_key: checkIdempotencyKey(input.idempotencyKey),
    enqueued_at: new Date(Math.floor(clock.wallNow())).toISOString(),
    ...(options.trace === undefined ? {} : { trace_context: options.trace }),
  };
  return Object.freeze(envelope);
}

/** Validates an envelope read back from storage or received as JSON (a string or a parsed object). */
export function parseEnvelope(raw: unknown, options: Pick<EnvelopeOptions, 'maxPayloadBytes'> = {}): TaskEnvelope {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new InvalidTaskEnvelope('json', 'is not JSON', { cause: error });
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidTaskEnvelope('envelope', 'must be a JSON object');
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!ENVELOPE_FIELDS.has(key)) throw new InvalidTaskEnvelope(key, 'is not an envelope field');
  }
  if (typeof fields.id !== 'string' || !UUID7.test(fields.id)) throw new InvalidTaskEnvelope('id', 'must be a lowercase UUID version 7');
  const maxRetries = integerField('max_retries', fields.max_retries, undefined, 0, TASK_CAPS.maxRetries);
  const soft = integerField('timeout_soft_ms', fields.timeout_soft_ms, undefined, 1, TASK_CAPS.maxTimeoutMs);
  if (!('payload' in fields)) throw new InvalidTaskEnvelope('payload', 'is missing');
  checkPayload(fields.payload, options.maxPayloadBytes);
  if (fields.run_at !== null && typeof fields.run_at !== 'string') throw new InvalidTaskEnvelope('run_at', 'must be an ISO 8601 string or null');
  if (typeof fields.enqueued_at !== 'string') throw new InvalidTaskEnvelope('enqueued_at', 'must be an ISO 8601 string');
  // A malformed trace context is dropped, not refused: tracing never fails the work it describes.
  const trace = fields.trace_context === undefined ? undefined : parseCarrier(fields.trace_context);
  return Object.freeze({
    id: fields.id,
    name: checkName(fields.name),
    payload: fields.payload as JsonValue,
    // A task may have failed once more than max_retries allows: that last failure sent it to the dead-letter queue.
    attempts: integerField('attempts', fields.attempts, undefined, 0, maxRetries + 1),
    max_retries: maxRetries,
    run_at: fields.run_at === null ? null : isoField('run_at', fields.run_at),
    timeout_soft_ms: soft,
    timeout_hard_ms: integerField('timeout_hard_ms', fields.timeout_hard_ms, undefined, soft, TASK_CAPS.maxTimeoutMs),
    idempotency_key: checkIdempotencyKey(fields.idempotency_key ?? null),
    enqueued_at: isoField('enqueued_at', fields.enqueued_at),
    ...(trace === undefined ? {} : { trace_context: trace }),
  });
}

/** Throws TaskQueueDepthExceeded when `queue` already holds `depth` tasks of at most `limit` (default and cap 100,000). */
export function checkQueueDepth(queue: string, depth: number, limit: number = TASK_CAPS.maxQueueDepth): void {
  if (depth >= Math.min(limit, TASK_CAPS.maxQueueDepth)) throw new TaskQueueDepthExceeded(queue, depth, Math.min(limit, TASK_CAPS.maxQueueDepth));
}

/** UTF-8 bytes of the payload's JSON, which must exist; throws TaskPayloadTooLarge past the cap. */
export function checkPayload(payload: unknown, limit: number = TASK_CAPS.maxPayloadBytes): number {
  const cap = Math.min(limit, TASK_CAPS.maxPayloadBytes);
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    throw new InvalidTaskEnvelope('payload', 'has no JSON form (a BigInt or a cycle)', { cause: error });
  }
  if (json === undefined) throw new InvalidTaskEnvelope('payload', 'has no JSON form (undefined or a function)');
  // Cheap bound first: a string of n UTF-16 units is at most 3n UTF-8 bytes.
  const size = json.length * 3 <= cap ? json.length : Buffer.byteLength(json, 'utf8');
  if (size > cap) throw new TaskPayloadTooLarge(size, cap);
  return size;
}

const ENVELOPE_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'name',
  'payload',
  'attempts',
  'max_retries',
  'run_at',
  'timeout_soft_ms',
  'timeout_hard_ms',
  'idempotency_key',
  'enqueued_at',
  'trace_context',
]);

export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > TASK_CAPS.maxNameLength || !NAME.test(name)) {
    throw new InvalidTaskEnvelope('name', `must be 1..${TASK_CAPS.maxNameLength} characters of A-Z a-z 0-9 _ . : -`);
  }
  return name;
}

function checkIdempotencyKey(key: unknown): string | null {
  if (key === undefined || key === null) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > TASK_CAPS.maxIdempotencyKeyLength) {
    throw new InvalidTaskEnvelope('idempotency_key', `must be a string of 1..${TASK_CAPS.maxIdempotencyKeyLength} characters`);
  }
  return key;
}

function integerField(field: string, value: unknown, fallback: number | undefined, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw new InvalidTaskEnvelope(field, `must be an integer in ${min}..${max}, got ${String(resolved)}`);
  }
  return resolved;
}

/** A time as canonical ISO 8601 UTC (so envelopes compare as strings). */
function isoField(field: string, value: unknown): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new InvalidTaskEnvelope(field, 'must be a valid date (a Date, epoch milliseconds or ISO 8601)');
  return new Date(ms).toISOString();
}

/**
 * Stream endpoints of the admin surface, registered when it is given a StreamStore; they call the
 * public StreamStore API only. Reads follow the surface's token rule; the two writes need a
 * configured token (403 ADMIN_TOKEN_REQUIRED without one, as every mutating endpoint).
 *
 *   GET  /streams                              every stream with its info (at most 1,000)
 *   GET  /streams/:stream                      its info and its consumers' (ack floor, next, pending, lag)
 *   GET  /streams/:stream/messages?from=&limit= messages from `from` (default: the last `limit`), at most 100
 *   GET  /streams/:stream/consumers/:consumer  one consumer
 *   POST /streams/:stream/purge                { beforeSeq? | olderThanMs? | keep? } → { stream, purged }
 *   POST /streams/:stream/consumers/:consumer/seek  { seq } | { time } | { to: 'first'|'new' } → { stream, consumer, nextSeq }
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BusErrorCode } from '../bus/errors.js';
import type { ConsumerPosition, StreamMessage, StreamPurgeOptions, StreamStore } from '../bus/streams/store.js';
import { serveAdmitted, type AdmissionCounter, type AdmissionLimits } from './admission.js';
import { AdminBadRequest, AdminBodyTimeout, AdminBodyTooLarge, AdminMethodNotAllowed, AdminNotFound, AdminTokenRequired } from './errors.js';
import { errorBody, sendJson, statusFor } from './http-response.js';
import { readJsonBody } from './request-body.js';

/** What the stream writes need besides the admission limits: where the surface listens, and how bodies are read. */
export interface StreamHttpSettings extends AdmissionLimits {
  readonly host: string;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

/** Streams `GET /streams` describes at most; messages one view returns at most; payload bytes shown per message. */
export const STREAM_VIEW_LIMITS = { maxStreams: 1_000, maxMessages: 100, defaultMessages: 20, maxPreviewBytes: 4_096 } as const;

const STREAM_ERROR_STATUS: Readonly<Record<string, number>> = {
  [BusErrorCode.StreamNotFound]: 404,
  [BusErrorCode.StreamConsumerNotFound]: 404,
  [BusErrorCode.StreamInvalidArgument]: 400,
};

/** One message as JSON: a value payload decoded, a bytes payload as UTF-8 text if it is, else base64; cut at maxPreviewBytes. */
export interface StreamMessageView {
  readonly seq: number;
  readonly time: number;
  readonly headers: Readonly<Record<string, string>> | null;
  readonly encoding: 'bytes' | 'msgpack';
  readonly bytes: number;
  readonly value?: unknown;
  readonly text?: string;
  readonly base64?: string;
  readonly truncated: boolean;
}

export async function serveStreams(
  store: StreamStore,
  settings: StreamHttpSettings,
  listener: AdmissionCounter,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse,
): Promise<void> {
  let parts: string[];
  try {
    parts = url.pathname.split('/').slice(2).map(decodeURIComponent);
  } catch {
    sendJson(response, 404, errorBody(new AdminNotFound(url.pathname)));
    return;
  }
  const write = isWrite(parts);
  const allowed = write ? 'POST' : 'GET';
  if (request.method !== allowed) {
    response.setHeader('allow', allowed);
    sendJson(response, 405, errorBody(new AdminMethodNotAllowed(request.method ?? '?', allowed)));
    return;
  }
  await serveAdmitted(listener, settings, request, response, async () => {
    try {
      if (!write) {
        sendJson(response, 200, await route(store, parts, url));
        return;
      }
      if (!listener.guard.hasToken) throw new AdminTokenRequired(settings.host, `POST ${url.pathname}`);
      const body = await readJsonBody(request, settings.maxBodyBytes, settings.bodyTimeoutMs);
      sendJson(response, 200, await writeRoute(store, parts, body));
    } catch (error) {
      if (error instanceof AdminBodyTooLarge || error instanceof AdminBodyTimeout) response.setHeader('connection', 'close');
      sendJson(response, statusFor(error, STREAM_ERROR_STATUS), errorBody(error));
    }
  });
}

/** `/streams/:stream/purge` and `/streams/:stream/consumers/:consumer/seek` are the writes; every other path reads. */
function isWrite(parts: readonly string[]): boolean {
  return (parts.length === 2 && parts[1] === 'purge') || (parts.length === 4 && parts[1] === 'consumers' && parts[3] === 'seek');
}

async function writeRoute(store: StreamStore, parts: string[], body: unknown): Promise<unknown> {
  if (parts.some((part) => part === '' || part.length > 300)) throw new AdminNotFound(`/streams/${parts.join('/')}`);
  const stream = parts[0]!;
  const fields = objectBody(body);
  if (parts[1] === 'purge') {
    const options: Record<string, number> = {};
    for (const [key, value] of Object.entries(fields)) {
      if (key !== 'beforeSeq' && key !== 'olderThanMs' && key !== 'keep') throw new AdminBadRequest(key, 'is not a field here (fields: beforeSeq, olderThanMs, keep)');
      if (typeof value !== 'number') throw new AdminBadRequest(key, 'must be a number');
      options[key] = value;
    }
    return { stream, purged: await store.purge(stream, options as StreamPurgeOptions) };
  }
  const consumer = parts[2]!;
  return { stream, consumer, nextSeq: await store.seekConsumer(stream, consumer, position(fields)) };
}

/** The seek body: exactly one of `seq` (a sequence), `time` (ms since the epoch or an ISO date), `to` ('first' or 'new'). */
function position(fields: Record<string, unknown>): ConsumerPosition {
  const keys = Object.keys(fields);
  for (const key of keys) if (key !== 'seq' && key !== 'time' && key !== 'to') throw new AdminBadRequest(key, 'is not a field here (fields: seq, time, to)');
  if (keys.length !== 1) throw new AdminBadRequest('body', 'takes exactly one of seq, time, to');
  const { seq, time, to } = fields;
  if (keys[0] === 'seq') {
    if (typeof seq !== 'number') throw new AdminBadRequest('seq', 'must be a number');
    return { seq };
  }
  if (keys[0] === 'to') {
    if (to !== 'first' && to !== 'new') throw new AdminBadRequest('to', "must be 'first' or 'new'");
    return to;
  }
  const ms = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : Number.NaN;
  if (!Number.isFinite(ms)) throw new AdminBadRequest('time', 'must be ms since the epoch or an ISO 8601 date');
  return { time: ms };
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AdminBadRequest('body', 'must be a JSON object');
  return body as Record<string, unknown>;
}

async function route(store: StreamStore, parts: string[], url: URL): Promise<unknown> {
  if (parts.some((part) => part === '' || part.length > 300)) throw new AdminNotFound(url.pathname);
  if (parts.length === 0) {
    const names = (await store.streams()).slice(0, STREAM_VIEW_LIMITS.maxStreams);
    return { streams: await Promise.all(names.map((name) => store.streamInfo(name))) };
  }
  const stream = parts[0]!;
  if (parts.length === 1) {
    const info = await store.streamInfo(stream);
    const consumers = await store.consumers(stream);
    return { stream: info, consumers: await Promise.all(consumers.map((name) => store.consumerInfo(stream, name))) };
  }
  if (parts.length === 2 && parts[1] === 'messages') return { messages: await messages(store, stream, url) };
  if (parts.length === 3 && parts[1] === 'consumers') return store.consumerInfo(stream, parts[2]!);
  throw new AdminNotFound(url.pathname);
}

async function messages(store: StreamStore, stream: string, url: URL): Promise<StreamMessageView[]> {
  const limit = integerParam(url, 'limit', STREAM_VIEW_LIMITS.defaultMessages, 1, STREAM_VIEW_LIMITS.maxMessages);
  const info = await store.streamInfo(stream);
  const from = integerParam(url, 'from', Math.max(1, info.lastSeq - limit + 1), 1, Number.MAX_SAFE_INTEGER);
  const seqs = [];
  for (let seq = from; seq <= info.lastSeq && seqs.length < limit; seq++) seqs.push(seq);
  // Evicted sequences answer undefined and are left out.
  const found = await Promise.all(seqs.map((seq) => store.getMessage(stream, seq)));
  return found.filter((message): message is StreamMessage => message !== undefined).map(view);
}

function view(message: StreamMessage): StreamMessageView {
  const base = { seq: message.seq, time: message.time, headers: message.headers ?? null, encoding: message.encoding, bytes: message.payload.byteLength };
  const truncated = message.payload.byteLength > STREAM_VIEW_LIMITS.maxPreviewBytes;
  if (message.encoding === 'msgpack' && !truncated) return { ...base, value: message.value(), truncated };
  const shown = message.payload.subarray(0, STREAM_VIEW_LIMITS.maxPreviewBytes);
  const text = shown.toString('utf8');
  return Buffer.from(text, 'utf8').equals(shown) ? { ...base, text, truncated } : { ...base, base64: shown.toString('base64'), truncated };
}

function integerParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new AdminBadRequest(name, `must be an integer in ${min}..${max}`);
  return value;
}

/**
 * Request bodies of the mutating admin endpoints: read up to a byte cap (the socket is not read
 * past it) and within a deadline (a body sent a byte at a time would hold its request slot for as
 * long as the sender likes), parsed as JSON, refused with typed errors (413 past the cap, 408 past
 * the deadline, 400 for anything not JSON).
 */
import type { IncomingMessage } from 'node:http';
import { AdminBadRequest, AdminBodyTimeout, AdminBodyTooLarge } from './errors.js';

/** Default cap of a request body: room for a batch of 1,000 tasks with small payloads, or one 1 MiB payload and more. */
export const DEFAULT_ADMIN_MAX_BODY_BYTES = 8 * 1024 * 1024;
export const MAX_ADMIN_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Default time to receive a whole body, from when the handler starts reading it: 8 MiB at ~1 MB/s. */
export const DEFAULT_ADMIN_BODY_TIMEOUT_MS = 10_000;
export const MAX_ADMIN_BODY_TIMEOUT_MS = 120_000;

/** Reads and parses the body; an empty body is `{}`. */
export function readJsonBody(request: IncomingMessage, limitBytes: number, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      reject(new AdminBodyTooLarge(limitBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = setTimeout(() => {
      request.pause();
      finish(new AdminBodyTimeout(timeoutMs));
    }, timeoutMs);
    const finish = (error: Error | undefined, value?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      request.off('data', onData);
      if (error !== undefined) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        // Stop reading: the answer is sent and the connection closed after it.
        request.pause();
        finish(new AdminBodyTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('error', (error) => finish(error));
    request.once('end', () => {
      const text = Buffer.concat(chunks, size).toString('utf8');
      if (text.trim() === '') {
        finish(undefined, {});
        return;
      }
      try {
        finish(undefined, JSON.parse(text) as unknown);
      } catch {
        finish(new AdminBadRequest('body', 'is not JSON'));
      }
    });
  });
}

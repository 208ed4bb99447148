/**
 * Request bodies of the mutating admin endpoints: read up to a byte cap (the socket is not read
 * past it), parsed as JSON, refused with typed errors (413 past the cap, 400 for anything not JSON).
 */
import type { IncomingMessage } from 'node:http';
import { AdminBadRequest, AdminBodyTooLarge } from './errors.js';

/** Default cap of a request body: room for a batch of 1,000 tasks with small payloads, or one 1 MiB payload and more. */
export const DEFAULT_ADMIN_MAX_BODY_BYTES = 8 * 1024 * 1024;
export const MAX_ADMIN_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads and parses the body; an empty body is `{}`. */
export function readJsonBody(request: IncomingMessage, limitBytes: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      reject(new AdminBodyTooLarge(limitBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | undefined, value?: unknown): void => {
      if (done) return;
      done = true;
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

/** How the admin surface answers: JSON bodies, `{ error: { code, message } }` for failures, and their HTTP statuses. */
import type { ServerResponse } from 'node:http';
import { MoloError } from '../actors/index.js';
import { AdminErrorCode } from './errors.js';

export function statusFor(error: unknown): number {
  if (!(error instanceof MoloError)) return 500;
  switch (error.code) {
    case AdminErrorCode.Unavailable:
    case AdminErrorCode.Busy:
    case AdminErrorCode.Overloaded:
      return 503;
    case AdminErrorCode.NotFound:
      return 404;
    case AdminErrorCode.BadRequest:
      return 400;
    case AdminErrorCode.BodyTooLarge:
      return 413;
    case AdminErrorCode.TokenRequired:
      return 403;
    default:
      return 500;
  }
}

export function errorBody(error: unknown): { error: { code: string; message: string } } {
  if (error instanceof MoloError) return { error: { code: error.code, message: error.message } };
  return { error: { code: AdminErrorCode.SnapshotFailed, message: error instanceof Error ? error.message : String(error) } };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  };
  if (status === 503) headers['retry-after'] = 1;
  response.writeHead(status, headers);
  response.end(text);
}

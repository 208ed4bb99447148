/** How the admin surface answers: JSON bodies, `{ error: { code, message } }` for failures, and their HTTP statuses. */
import type { ServerResponse } from 'node:http';
import { MoloError } from '../actors/index.js';
import { AdminErrorCode } from './errors.js';

/** HTTP status of each admin error code; any other error is a 500. */
const ADMIN_STATUS: Readonly<Record<string, number>> = {
  [AdminErrorCode.Unavailable]: 503,
  [AdminErrorCode.Busy]: 503,
  [AdminErrorCode.Overloaded]: 503,
  [AdminErrorCode.NotFound]: 404,
  [AdminErrorCode.BadRequest]: 400,
  [AdminErrorCode.BodyTooLarge]: 413,
  [AdminErrorCode.BodyTimeout]: 408,
  [AdminErrorCode.TokenRequired]: 403,
  [AdminErrorCode.EventsFull]: 503,
  [AdminErrorCode.ActionFailed]: 409,
};

/** The status of `error`: by its code in `more`, then in the admin's own table, else 500. */
export function statusFor(error: unknown, more: Readonly<Record<string, number>> = {}): number {
  if (!(error instanceof MoloError)) return 500;
  return more[error.code] ?? ADMIN_STATUS[error.code] ?? 500;
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

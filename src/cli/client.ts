import { AdminBadResponse, AdminUnreachable } from '../admin/errors.js';

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * GETs `path` from the admin surface at `baseUrl` and parses its JSON body, whatever the HTTP
 * status. `token` (from MOLO_ADMIN_TOKEN, never a flag: flags show in `ps`) goes as a bearer token.
 */
export async function getJson(baseUrl: string, path: string, timeoutMs: number, token?: string): Promise<AdminAnswer> {
  return requestJson(baseUrl, path, timeoutMs, token);
}

/** POSTs `body` as JSON to `path` (the mutating task endpoints); otherwise as {@link getJson}. */
export async function postJson(baseUrl: string, path: string, body: unknown, timeoutMs: number, token?: string): Promise<AdminAnswer> {
  return requestJson(baseUrl, path, timeoutMs, token, body);
}

async function requestJson(baseUrl: string, path: string, timeoutMs: number, token?: string, body?: unknown): Promise<AdminAnswer> {
  const url = new URL(path, baseUrl).toString();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== undefined && token !== '') headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers, ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }) });
  } catch (error) {
    throw new AdminUnreachable(url, error);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new AdminBadResponse(url, response.status, `not JSON: ${text.slice(0, 120)}`);
  }
}

/** The `{ error: { code, message } }` body the admin surface answers failures with, if it is one. */
export function errorOf(body: unknown): { code: string; message: string } | undefined {
  if (body === null || typeof body !== 'object' || !('error' in body)) return undefined;
  const error = (body as { error: unknown }).error;
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? { code, message: typeof message === 'string' ? message : '' } : undefined;
}

/**
 * What the operator should set after a 401 or 403, appended to the error line: scripts and people
 * both see which variable is missing or wrong rather than a bare status.
 */
export function authHint(status: number, token: string | undefined): string {
  if (status === 401) return token === undefined || token === '' ? "; set MOLO_ADMIN_TOKEN to the node's admin.token" : "; MOLO_ADMIN_TOKEN is not the node's admin.token";
  if (status === 403) return '; give the node an admin.token (and set MOLO_ADMIN_TOKEN to it) to act on it';
  return '';
}

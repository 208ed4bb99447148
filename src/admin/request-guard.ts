/**
 * Who may ask the admin surface: the `Host` header must name this surface (DNS rebinding: a web
 * page on evil.example resolving its name to 127.0.0.1 sends `Host: evil.example`), and when a
 * token is set every endpoint but the probes needs `authorization: Bearer <token>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { AdminHostRefused, AdminInvalidOption, AdminTokenRequired, AdminUnauthorized } from './errors.js';

/** Shorter tokens are refused: the token is all that stands between the network and the tree. */
export const MIN_TOKEN_LENGTH = 16;
const MAX_ALLOWED_HOSTS = 64;

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface RequestGuard {
  /** Throws AdminHostRefused for a Host that is not ours. */
  checkHost(request: IncomingMessage): void;
  /** Throws AdminUnauthorized without the token (nothing to check when none is set). */
  checkToken(request: IncomingMessage): void;
  /** Whether a token is configured: mutating endpoints are refused without one. */
  readonly hasToken: boolean;
}

export interface RequestGuardOptions {
  /** The bound host. */
  readonly host: string;
  readonly token: string | undefined;
  /** Further names the surface answers to (a DNS name, a load balancer's); `*` accepts any. */
  readonly allowedHosts: readonly string[] | undefined;
  /** Whether a non-loopback bind without a token is refused (the tree surface) or allowed (probes and metrics only). */
  readonly requireTokenOffLoopback: boolean;
}

export function requestGuard(options: RequestGuardOptions): RequestGuard {
  const { host, token } = options;
  if (token !== undefined && (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH)) {
    throw new AdminInvalidOption('admin.token', `must be a string of at least ${MIN_TOKEN_LENGTH} characters`);
  }
  const allowed = options.allowedHosts ?? [];
  if (!Array.isArray(allowed) || allowed.length > MAX_ALLOWED_HOSTS || !allowed.every((name) => typeof name === 'string' && name.length > 0)) {
    throw new AdminInvalidOption('admin.allowedHosts', `must be a list of at most ${MAX_ALLOWED_HOSTS} host names`);
  }
  if (options.requireTokenOffLoopback && token === undefined && !isLoopback(host)) throw new AdminTokenRequired(host);
  // Loopback names cannot be rebound by someone else's DNS: always ours.
  const names = new Set([host.toLowerCase(), ...LOOPBACK_NAMES, ...allowed.map((name) => name.toLowerCase())]);
  const any = names.has('*');
  const expected = token === undefined ? undefined : digest(token);
  return {
    hasToken: expected !== undefined,
    checkHost(request) {
      if (any) return;
      const header = request.headers.host;
      const name = header === undefined ? undefined : hostName(header);
      // An IP literal cannot be rebound: DNS rebinding needs a name. Names must be ours.
      if (name !== undefined && (isIP(name) !== 0 || names.has(name))) return;
      throw new AdminHostRefused(header ?? '');
    },
    checkToken(request) {
      if (expected === undefined) return;
      const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
      if (match === null || !timingSafeEqual(digest(match[1]!), expected)) throw new AdminUnauthorized();
    },
  };
}

/** `name`, `name:port`, `[v6]:port` → the lower-case name without brackets or port. */
function hostName(header: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed !== null) return bracketed[1]!.toLowerCase();
  return header.replace(/:\d+$/, '').toLowerCase();
}

/** Equal-length values for timingSafeEqual, whatever the token's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

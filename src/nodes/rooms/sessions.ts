/**
 * Sessions on the KV interface with a TTL: on a shared store (the Postgres KV) an instance that did
 * not create a session reads and renews it, so a socket that reconnects to another instance stays
 * signed in. Ids are 32 random bytes (base64url): unguessable, never derived from the user.
 * `sessionAuthenticate` turns a store into the rooms' authentication hook (cookie or bearer token).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { getJson, setJson, type KvStore } from '../../data/index.js';
import { InvalidRoomOption } from './errors.js';
import type { Authenticate } from './options.js';

export interface SessionStoreOptions {
  /** Key prefix (default `session:`). */
  readonly prefix?: string;
  /** A session not renewed for this long is gone (default 24 h; 1 s .. 30 days, the KV TTL cap). */
  readonly ttlMs?: number;
}

export interface SessionStore<T = unknown> {
  readonly ttlMs: number;
  create(data: T): Promise<string>;
  get(id: string): Promise<T | undefined>;
  /** Renews the TTL (sliding expiry); resolves with the data, or undefined when it is gone. */
  touch(id: string): Promise<T | undefined>;
  set(id: string, data: T): Promise<void>;
  destroy(id: string): Promise<boolean>;
}

const ID = /^[A-Za-z0-9_-]{43}$/;

export function sessionStore<T = unknown>(kv: KvStore, options: SessionStoreOptions = {}): SessionStore<T> {
  for (const key of Object.keys(options)) if (key !== 'prefix' && key !== 'ttlMs') throw new InvalidRoomOption(`sessions.${key}`, 'unknown option (known: prefix, ttlMs)');
  const prefix = options.prefix ?? 'session:';
  const ttlMs = options.ttlMs ?? 86_400_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 1_000 || ttlMs > 30 * 86_400_000) throw new InvalidRoomOption('sessions.ttlMs', 'must be an integer in 1000..2592000000');
  // A malformed id never reaches the store (nor its key-size cap).
  const key = (id: string): string | undefined => (typeof id === 'string' && ID.test(id) ? prefix + id : undefined);
  return {
    ttlMs,
    async create(data) {
      const id = randomBytes(32).toString('base64url');
      await setJson(kv, prefix + id, data, { ttlMs });
      return id;
    },
    async get(id) {
      const k = key(id);
      return k === undefined ? undefined : getJson<T>(kv, k);
    },
    async touch(id) {
      const k = key(id);
      if (k === undefined) return undefined;
      const data = await getJson<T>(kv, k);
      if (data !== undefined) await setJson(kv, k, data, { ttlMs });
      return data;
    },
    async set(id, data) {
      const k = key(id);
      if (k === undefined) throw new InvalidRoomOption('session id', 'not a session id');
      await setJson(kv, k, data, { ttlMs });
    },
    async destroy(id) {
      const k = key(id);
      return k === undefined ? false : kv.delete(k);
    },
  };
}

/** The rooms' authentication hook from a session store: the `cookie` (default `molo_session`) or a `Bearer` token names the session, renewed on use. */
export function sessionAuthenticate(store: SessionStore, options: { readonly cookie?: string } = {}): Authenticate {
  const name = options.cookie ?? 'molo_session';
  return async (req: IncomingMessage) => {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const cookie = (req.headers.cookie ?? '')
      .split(';')
      .map((part) => part.trim().split('='))
      .find(([k]) => k === name)?.[1];
    const id = bearer ?? cookie;
    return id === undefined ? undefined : store.touch(id);
  };
}

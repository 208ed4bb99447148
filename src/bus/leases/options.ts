/** Options of a leader lease, with their defaults (S7-5: 10 s TTL, 3 s renewal), checked once. */
import { randomUUID } from 'node:crypto';
import type { KvStore } from '../../data/kv/index.js';
import { InvalidBusOption } from '../errors.js';
import type { LeaseEvent } from './events.js';

export interface LeaderLeaseOptions {
  /** Where the lease lives: a SQL KV store (SQLite for one node, Postgres shared by the deployment). */
  readonly store: KvStore;
  /** The lease's name (say `scheduler`); its key is `molo:lease:<name>`. 1..128 of [A-Za-z0-9_.:-]. */
  readonly name: string;
  /** Who contends: unique per lease actor (default: a random UUID); never reuse one across processes. */
  readonly holder?: string;
  /** How long a term lasts without renewal (default 10,000 ms; 100..600,000). */
  readonly ttlMs?: number;
  /** How often a leader renews and a follower tries to take over (default 3,000 ms; under ttlMs − safetyMarginMs). */
  readonly renewEveryMs?: number;
  /** How long before the store's expiry a leader that could not renew steps down (default 1,000 ms; under ttlMs). */
  readonly safetyMarginMs?: number;
  /** Called with every `elected`/`deposed` event, in the lease actor (keep it short; a throw is logged). */
  readonly onEvent?: (event: LeaseEvent) => void;
}

export interface ResolvedLeaseOptions {
  readonly store: KvStore;
  readonly name: string;
  readonly key: string;
  readonly holder: string;
  readonly ttlMs: number;
  readonly renewEveryMs: number;
  readonly safetyMarginMs: number;
  readonly onEvent: ((event: LeaseEvent) => void) | undefined;
}

export const LEASE_DEFAULTS = Object.freeze({ ttlMs: 10_000, renewEveryMs: 3_000, safetyMarginMs: 1_000 });

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

export function resolveLeaseOptions(options: LeaderLeaseOptions): ResolvedLeaseOptions {
  const store = options?.store;
  if (typeof store?.setIfVersion !== 'function') throw new InvalidBusOption('lease.store', 'must be a KvStore');
  if (typeof options.name !== 'string' || !NAME.test(options.name)) throw new InvalidBusOption('lease.name', 'must be 1..128 characters of A-Z a-z 0-9 _ . : -');
  const holder = options.holder ?? randomUUID();
  if (typeof holder !== 'string' || holder.length === 0 || holder.length > 256) throw new InvalidBusOption('lease.holder', 'must be a string of 1..256 characters');
  const ttlMs = whole('lease.ttlMs', options.ttlMs ?? LEASE_DEFAULTS.ttlMs, 100, 600_000);
  const safetyMarginMs = whole('lease.safetyMarginMs', options.safetyMarginMs ?? Math.min(LEASE_DEFAULTS.safetyMarginMs, Math.floor(ttlMs / 10)), 0, ttlMs - 1);
  // A renewal must fit in a term with room to spare, or a leader steps down between renewals.
  const renewEveryMs = whole('lease.renewEveryMs', options.renewEveryMs ?? Math.min(LEASE_DEFAULTS.renewEveryMs, Math.floor(ttlMs / 3)), 10, ttlMs - safetyMarginMs - 1);
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') throw new InvalidBusOption('lease.onEvent', 'must be a function');
  return { store, name: options.name, key: `molo:lease:${options.name}`, holder, ttlMs, renewEveryMs, safetyMarginMs, onEvent: options.onEvent };
}

function whole(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidBusOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return value;
}

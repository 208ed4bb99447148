/**
 * Options of the observer page and its event stream (`admin.observer`), with their defaults and caps.
 * Every count and buffer here is bounded: a page left open in many tabs, or a tab that stops
 * reading, must not grow the node's memory.
 */
import { unknownOptionKey } from '../../actors/option-keys.js';
import { checkInteger } from '../admin-actor.js';
import { AdminInvalidOption } from '../errors.js';

export interface ObserverOptions {
  /** How often a sample of the cluster is taken while a page follows `/events` (default 1 s, 100 ms .. 60 s). */
  readonly sampleIntervalMs?: number;
  /** Samples kept for the charts (default 300, i.e. 5 minutes at 1 s; 10 .. 3,600). */
  readonly samples?: number;
  /** `/events` streams open at once (default 8, 1 .. 64, and below `maxConnections`); more get 503 ADMIN_EVENTS_FULL. */
  readonly maxEventConnections?: number;
  /** Bytes queued on one event stream before frames are skipped for it (default 4 MiB, 64 KiB .. 64 MiB). */
  readonly maxEventBufferBytes?: number;
  /** A comment line this often keeps idle proxies from closing the stream (default 15 s, 1 s .. 120 s). */
  readonly heartbeatMs?: number;
}

export interface ObserverSettings {
  readonly sampleIntervalMs: number;
  readonly samples: number;
  readonly maxEventConnections: number;
  readonly maxEventBufferBytes: number;
  readonly heartbeatMs: number;
}

/** Ranges of the observer's options: `[min, max]`. */
export const OBSERVER_LIMITS = {
  sampleIntervalMs: [100, 60_000],
  samples: [10, 3_600],
  maxEventConnections: [1, 64],
  maxEventBufferBytes: [64 * 1024, 64 * 1024 * 1024],
  heartbeatMs: [1_000, 120_000],
} as const satisfies Record<keyof ObserverSettings, readonly [number, number]>;

export const DEFAULT_OBSERVER_SETTINGS: ObserverSettings = {
  sampleIntervalMs: 1_000,
  samples: 300,
  maxEventConnections: 8,
  maxEventBufferBytes: 4 * 1024 * 1024,
  heartbeatMs: 15_000,
};

const KEYS = Object.keys(OBSERVER_LIMITS);

/** Checks `options` (unknown keys name the nearest one); event streams must leave sockets for everything else. */
export function resolveObserverOptions(options: ObserverOptions | undefined, maxConnections: number): ObserverSettings {
  if (options === undefined) {
    return { ...DEFAULT_OBSERVER_SETTINGS, maxEventConnections: Math.min(DEFAULT_OBSERVER_SETTINGS.maxEventConnections, Math.floor(maxConnections / 2)) };
  }
  if (options === null || typeof options !== 'object') throw new AdminInvalidOption('admin.observer', 'must be an object or false');
  const unknown = unknownOptionKey(options, KEYS);
  if (unknown !== undefined) throw new AdminInvalidOption(`admin.observer.${unknown.key}`, unknown.detail);
  const settings = { ...DEFAULT_OBSERVER_SETTINGS, maxEventConnections: Math.min(DEFAULT_OBSERVER_SETTINGS.maxEventConnections, Math.floor(maxConnections / 2)), ...options };
  for (const key of KEYS as (keyof ObserverSettings)[]) {
    const [min, max] = OBSERVER_LIMITS[key];
    checkInteger(`admin.observer.${key}`, settings[key], min, key === 'maxEventConnections' ? Math.min(max, maxConnections - 1) : max);
  }
  return settings;
}

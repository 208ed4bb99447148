/**
 * Hybrid logical clock (Kulkarni, Demirbas et al., "Logical Physical Clocks", 2014): a timestamp is
 * (wall, counter), where `wall` is the largest physical time (ms) this node has seen, its own or a
 * peer's, and `counter` orders events within one `wall`. It never goes backwards, even when the
 * physical clock does, and a received timestamp always precedes every later local one: so LWW
 * between nodes follows causality, and skew cannot silently invert an order (07's guideline).
 *
 * Encoding: `<wall: 12 hex digits>.<counter: 4 hex digits>`, fixed width, so string order is
 * timestamp order (the oplog and KV rows compare them as text, in SQL too). 12 hex digits of ms
 * reach the year 10889; a counter past 0xffff advances `wall` by one ms instead of overflowing
 * (a logical step ahead of the physical clock, which the next physical tick absorbs).
 *
 * Monotonic across restarts: the caller persists `last` (the oplog stores it in the same
 * transaction as the entries stamped with it) and gives it back as `highWater` on start.
 *
 * Drift cap: a remote timestamp more than `maxDriftMs` ahead of the local physical clock is refused
 * (`receive` throws ClockDriftExceeded; `accept` returns undefined) and counted: accepting it would
 * push every later local timestamp that far into the future.
 */
import { InvalidDataConfig } from '../errors.js';
import { refuseUnknownKeys } from '../option-keys.js';
import { ClockDriftExceeded, InvalidHybridTimestamp } from './errors.js';

export interface HybridTimestamp {
  /** Milliseconds since the epoch (the largest physical time seen). */
  readonly wall: number;
  /** Order among events with the same `wall`. */
  readonly counter: number;
}

export const HLC_MAX_WALL = 0xffff_ffff_ffff;
export const HLC_MAX_COUNTER = 0xffff;
/** Accepted remote drift: default and cap (`replication.maxDriftMs`). */
export const HLC_DEFAULTS = { maxDriftMs: 60_000 } as const;
export const HLC_CAPS = { maxDriftMs: 24 * 60 * 60 * 1000 } as const;

/** The smallest timestamp: before everything (an empty high water). */
export const HLC_ZERO = '000000000000.0000';
const PATTERN = /^[0-9a-f]{12}\.[0-9a-f]{4}$/;

export function encodeHlc(ts: HybridTimestamp): string {
  return `${ts.wall.toString(16).padStart(12, '0')}.${ts.counter.toString(16).padStart(4, '0')}`;
}

export function decodeHlc(text: string): HybridTimestamp {
  if (typeof text !== 'string' || !PATTERN.test(text)) throw new InvalidHybridTimestamp(String(text));
  return { wall: Number.parseInt(text.slice(0, 12), 16), counter: Number.parseInt(text.slice(13), 16) };
}

/** -1, 0 or 1: the encoding makes this plain string comparison. */
export function compareHlc(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface HybridClockOptions {
  /** Physical time in ms (default `Date.now`); tests inject a simulated clock. */
  readonly now?: () => number;
  /** The last timestamp issued before a restart (persisted by the caller); later ones are above it. */
  readonly highWater?: string;
  /** How far ahead of the local clock a remote timestamp may be (default 60 s, cap 24 h). */
  readonly maxDriftMs?: number;
}

const OPTION_KEYS = ['now', 'highWater', 'maxDriftMs'];

export class HybridClock {
  private wall: number;
  private counter: number;
  private readonly physical: () => number;
  readonly maxDriftMs: number;
  /** Remote timestamps refused for being too far ahead. */
  refused = 0;

  constructor(options: HybridClockOptions = {}) {
    refuseUnknownKeys('replication.clock', options, OPTION_KEYS);
    const maxDriftMs = options.maxDriftMs ?? HLC_DEFAULTS.maxDriftMs;
    if (!Number.isInteger(maxDriftMs) || maxDriftMs < 0 || maxDriftMs > HLC_CAPS.maxDriftMs) {
      throw new InvalidDataConfig('replication.maxDriftMs', `must be an integer from 0 to ${HLC_CAPS.maxDriftMs} (24 h), got ${String(maxDriftMs)}`);
    }
    this.maxDriftMs = maxDriftMs;
    this.physical = options.now ?? Date.now;
    const start = decodeHlc(options.highWater ?? HLC_ZERO);
    this.wall = start.wall;
    this.counter = start.counter;
  }

  /** The last timestamp issued or received. */
  get last(): string {
    return encodeHlc({ wall: this.wall, counter: this.counter });
  }

  /** A timestamp for a local event (a write): above every one issued or received before. */
  now(): string {
    const pt = this.pt();
    if (pt > this.wall) {
      this.wall = pt;
      this.counter = 0;
    } else this.bump();
    return this.last;
  }

  /**
   * Merges a remote timestamp (an entry being applied) and returns the local timestamp of the
   * receipt, above both. Throws ClockDriftExceeded (and counts it) when `remote` is too far ahead.
   */
  receive(remote: string): string {
    const r = decodeHlc(remote);
    const pt = this.pt();
    if (r.wall - pt > this.maxDriftMs) {
      this.refused++;
      throw new ClockDriftExceeded(r.wall - pt, this.maxDriftMs);
    }
    const wall = Math.max(this.wall, r.wall, pt);
    if (wall === this.wall && wall === r.wall) this.counter = Math.max(this.counter, r.counter);
    else if (wall === r.wall) this.counter = r.counter;
    else if (wall !== this.wall) this.counter = -1;
    this.wall = wall;
    this.bump();
    return this.last;
  }

  /** `receive`, with a refusal as undefined (still counted) rather than an error. */
  accept(remote: string): string | undefined {
    try {
      return this.receive(remote);
    } catch (error) {
      if (error instanceof ClockDriftExceeded) return undefined;
      throw error;
    }
  }

  /** Whether `remote` is within the drift cap, without merging it. */
  withinDrift(remote: string): boolean {
    return decodeHlc(remote).wall - this.pt() <= this.maxDriftMs;
  }

  private pt(): number {
    return Math.min(Math.max(0, Math.floor(this.physical())), HLC_MAX_WALL);
  }

  private bump(): void {
    if (this.counter < HLC_MAX_COUNTER) {
      this.counter++;
      return;
    }
    // Counter exhausted within one ms: step the logical wall instead of wrapping (order is kept).
    this.wall++;
    this.counter = 0;
  }
}

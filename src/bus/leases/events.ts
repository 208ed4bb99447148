/** What a lease actor tells and answers: its events, status and calls. */
import type { Ref } from '../../actors/index.js';

export type LeaseRole = 'follower' | 'leader';

/** Why a leader stopped leading. */
export type DeposedReason =
  /** A renewal found the lease taken by another holder (or gone). */
  | 'lost'
  /** No renewal succeeded in time: the term ran out (minus the safety margin). */
  | 'expired'
  /** The lease actor is stopping (it releases the lease). */
  | 'stopped';

export type LeaseEvent =
  | { readonly type: 'elected'; readonly lease: string; readonly holder: string; readonly token: number }
  | { readonly type: 'deposed'; readonly lease: string; readonly holder: string; readonly token: number; readonly reason: DeposedReason };

export interface LeaseStatus {
  readonly lease: string;
  readonly holder: string;
  readonly role: LeaseRole;
  /** The fencing token of the current term (null as a follower). */
  readonly token: number | null;
  /** Milliseconds of the term left on the clock (null as a follower). */
  readonly remainingMs: number | null;
  /** Whether a store call (acquire or renew) is under way. */
  readonly pending: boolean;
}

export type LeaseCall = { readonly type: 'status' } | { readonly type: 'subscribe'; readonly subscriber: Ref };


/**
 * The declared conflict policies (S7-8, R7-7): the only place timestamps and versions are compared.
 * Each decides, for a remote entry and the key's last accepted writer here, which side stands. All
 * three are total orders over writes (the hook one when its resolver is deterministic and
 * symmetric), so every node that has seen the same writes holds the same winner, whatever the order
 * they arrived in.
 * - `lww`: higher hybrid timestamp wins; equal timestamps break on instance id.
 * - `optimistic`: higher version wins (a write made on a newer row); equal versions, concurrent
 *   edits of one row, fall back to LWW so both sides pick the same one. Between instances on one
 *   database the version check happens in the UPDATE itself (ConflictError to the stale writer).
 * - `hook`: the model's resolver picks; past its timeout (default 5 s) LWW applies, counted.
 */
import type { ConflictSide, ReplicatedOption } from './targets.js';

export const HOOK_DEFAULTS = { timeoutMs: 5_000 } as const;
export const HOOK_CAPS = { timeoutMs: 60_000 } as const;

export type Side = 'local' | 'remote';

export function lwwWinner(local: ConflictSide, remote: ConflictSide): Side {
  if (remote.ts !== local.ts) return remote.ts > local.ts ? 'remote' : 'local';
  return remote.instance > local.instance ? 'remote' : 'local';
}

export function optimisticWinner(local: ConflictSide, remote: ConflictSide): Side {
  if (remote.version !== local.version) return remote.version > local.version ? 'remote' : 'local';
  return lwwWinner(local, remote);
}

/** Timers for the hook's deadline: the real ones, or a simulated clock's in tests. */
export interface PolicyTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: PolicyTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface Decision {
  readonly winner: Side;
  /** The hook did not answer in time (or threw): LWW decided. */
  readonly fellBack: boolean;
}

export async function decide(
  policy: ReplicatedOption,
  model: string,
  key: string,
  local: ConflictSide,
  remote: ConflictSide,
  timers: PolicyTimers,
): Promise<Decision> {
  if (policy.policy === 'lww') return { winner: lwwWinner(local, remote), fellBack: false };
  if (policy.policy === 'optimistic') return { winner: optimisticWinner(local, remote), fellBack: false };
  const timeoutMs = Math.min(policy.timeoutMs ?? HOOK_DEFAULTS.timeoutMs, HOOK_CAPS.timeoutMs);
  const controller = new AbortController();
  let handle: unknown;
  const deadline = new Promise<'timeout'>((resolve) => {
    handle = timers.setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const answer = await Promise.race([Promise.resolve(policy.resolve(local, remote, { model, key, signal: controller.signal })), deadline]);
    if (answer === 'local' || answer === 'remote') return { winner: answer, fellBack: false };
    return { winner: lwwWinner(local, remote), fellBack: true };
  } catch {
    return { winner: lwwWinner(local, remote), fellBack: true };
  } finally {
    timers.clearTimeout(handle);
    controller.abort();
  }
}

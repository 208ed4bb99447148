/**
 * `molo ps` options: `--sort KEY` (largest first for counts), `--filter TEXT` (ref, name or
 * behaviour), `--watch` (again every `--interval MS`, default 2 s, until interrupted or `--count N` times).
 */
import { CliUsageError } from '../admin/errors.js';
import type { ProcessEntry, ProcessSnapshot } from '../admin/process-snapshot.js';

/** Sort keys and the entry field each orders by; counts sort largest first, text alphabetically. */
export const PS_SORT_KEYS: Readonly<Record<string, keyof ProcessEntry>> = {
  mailbox: 'mailboxLength',
  handled: 'messagesHandled',
  dropped: 'messagesDropped',
  links: 'links',
  monitors: 'monitors',
  timers: 'timers',
  memory: 'memoryEstimate',
  behaviour: 'behaviour',
  name: 'name',
  ref: 'ref',
};
export const DEFAULT_PS_WATCH_MS = 2_000;
/** The watch interval's range: not faster than the node should be asked, not slower than useful. */
export const PS_WATCH_LIMITS = { minMs: 250, maxMs: 3_600_000, maxCount: 1_000_000 } as const;

export interface PsView {
  readonly sort: keyof ProcessEntry | undefined;
  readonly filter: string | undefined;
}

export function psView(sort: string | undefined, filter: string | undefined): PsView {
  if (sort !== undefined && PS_SORT_KEYS[sort] === undefined) throw new CliUsageError(`--sort must be one of ${Object.keys(PS_SORT_KEYS).join(', ')}, got ${sort}`);
  return { sort: sort === undefined ? undefined : PS_SORT_KEYS[sort], filter: filter === undefined || filter === '' ? undefined : filter.toLowerCase() };
}

/** The snapshot with its processes filtered and sorted; `total` stays the node's count. */
export function applyPsView(snapshot: ProcessSnapshot, view: PsView): ProcessSnapshot {
  let processes = [...snapshot.processes];
  if (view.filter !== undefined) processes = processes.filter((entry) => `${entry.ref} ${entry.name ?? ''} ${entry.behaviour}`.toLowerCase().includes(view.filter!));
  const key = view.sort;
  if (key !== undefined) {
    processes.sort((a, b) => {
      const x = a[key];
      const y = b[key];
      return typeof x === 'number' && typeof y === 'number' ? y - x : String(x ?? '').localeCompare(String(y ?? ''));
    });
  }
  return { ...snapshot, processes };
}

export function watchInterval(watch: boolean | undefined, interval: string | undefined, count: string | undefined): { everyMs: number; count: number } | undefined {
  if (watch !== true) {
    if (count !== undefined || interval !== undefined) throw new CliUsageError('--interval and --count go with --watch');
    return undefined;
  }
  const everyMs = interval === undefined ? DEFAULT_PS_WATCH_MS : Number(interval);
  if (!Number.isInteger(everyMs) || everyMs < PS_WATCH_LIMITS.minMs || everyMs > PS_WATCH_LIMITS.maxMs) {
    throw new CliUsageError(`--interval must be in ${PS_WATCH_LIMITS.minMs}..${PS_WATCH_LIMITS.maxMs} ms, got ${interval}`);
  }
  const times = count === undefined ? PS_WATCH_LIMITS.maxCount : Number(count);
  if (!Number.isInteger(times) || times < 1 || times > PS_WATCH_LIMITS.maxCount) throw new CliUsageError(`--count must be in 1..${PS_WATCH_LIMITS.maxCount}, got ${count}`);
  return { everyMs, count: times };
}

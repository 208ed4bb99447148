import type { ActorSystem, ProcessInfo } from '../actors/index.js';
import { ByteBudget } from './snapshot-budget.js';
import { summarize, type ProcessSummary } from './tree-snapshot.js';

/** One live process, as `ActorSystem.info` reports it; lists of refs are given as counts. */
export type ProcessEntry = ProcessSummary &
  Pick<ProcessInfo, 'trapExit' | 'timers' | 'memoryEstimate'> & {
    readonly ref: string;
    readonly links: number;
    readonly monitors: number;
    readonly monitoredBy: number;
    readonly parent: string | null;
  };

export interface ProcessSnapshot {
  readonly node: string;
  readonly takenAt: string;
  /** Live processes when the snapshot was taken; more than `processes.length` when truncated. */
  readonly total: number;
  /** Oldest first. */
  readonly processes: readonly ProcessEntry[];
  readonly truncated: boolean;
  readonly maxBytes: number;
}

/** Every live process, oldest first, until the byte cap; read through `processes()` and `info()` only. */
export function takeProcessSnapshot(system: ActorSystem, maxBytes: number): ProcessSnapshot {
  const budget = new ByteBudget(maxBytes);
  const refs = system.processes();
  const processes: ProcessEntry[] = [];
  for (const ref of refs) {
    const info = system.info(ref);
    if (info === undefined) continue;
    const entry = toEntry(info);
    if (!budget.take(entry)) break;
    processes.push(entry);
  }
  return {
    node: system.node,
    takenAt: new Date().toISOString(),
    total: refs.length,
    processes,
    truncated: budget.exhausted,
    maxBytes,
  };
}

function toEntry(info: ProcessInfo): ProcessEntry {
  return {
    ref: String(info.ref),
    ...summarize(info)!,
    links: info.links.length,
    monitors: info.monitors.length,
    monitoredBy: info.monitoredBy.length,
    trapExit: info.trapExit,
    timers: info.timers,
    parent: info.parent === undefined ? null : String(info.parent),
    memoryEstimate: info.memoryEstimate,
  };
}

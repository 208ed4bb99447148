import { CellFlag } from './cell-flags.js';
import type { ExitReason } from './exit.js';
import type { MonitorRef, Ref } from './ref.js';

const { AWAITING, EXITED, INITIALIZED, INITIALIZING, RUNNING, SCHEDULED, STOPPING, TRAP_EXIT } = CellFlag;

export type ActorStatus = 'initializing' | 'runnable' | 'running' | 'waiting' | 'exiting' | 'exited';

export interface ProcessInfo {
  readonly ref: Ref;
  readonly name: string | undefined;
  readonly behaviour: string;
  readonly status: ActorStatus;
  readonly mailboxLength: number;
  readonly mailboxCapacity: number;
  readonly messagesHandled: number;
  readonly messagesDropped: number;
  readonly links: readonly Ref[];
  readonly monitors: readonly Ref[];
  readonly monitoredBy: readonly Ref[];
  readonly trapExit: boolean;
  readonly timers: number;
  readonly parent: Ref | undefined;
  /** Rough bytes held by the actor: fixed cost plus mailbox, links and monitors. */
  readonly memoryEstimate: number;
}

/** The behaviour name shown for a behaviour (or handler function) that has none. */
export const DEFAULT_BEHAVIOUR_NAME = 'actor';
/** Fixed bytes of a cell, its ref and its table entry, measured with `npm run bench -- actors` (idle). */
const CELL_BYTES = 200;
const MESSAGE_BYTES = 48;
const EDGE_BYTES = 40;

/** What introspection reads of a cell (an interface, so this module never imports the cell). */
export interface InspectedCell {
  readonly flags: number;
  readonly self: Ref;
  readonly name: string | undefined;
  readonly parent: Ref | undefined;
  readonly behaviour: { readonly name?: string };
  readonly mailbox: { readonly length: number } | null;
  readonly mailboxOptions: { readonly capacity: number };
  readonly handledCount: number;
  readonly droppedCount: number;
  readonly links: ReadonlySet<Ref> | null;
  readonly monitoring: ReadonlyMap<MonitorRef, Ref> | null;
  /** Watchers: actors (cells) or the kernel's callbacks, which info leaves out. */
  readonly monitoredBy: ReadonlyMap<MonitorRef, { readonly self: Ref } | ((reason: ExitReason, ref: Ref) => void)> | null;
  readonly timerSet: { readonly size: number } | null;
}

/** An actor's status, read from its flags. */
export function actorStatus(flags: number): ActorStatus {
  if (flags & EXITED) return 'exited';
  if (flags & STOPPING) return 'exiting';
  if ((flags & (INITIALIZED | INITIALIZING)) !== INITIALIZED) return 'initializing';
  if (flags & (RUNNING | AWAITING)) return 'running';
  if (flags & SCHEDULED) return 'runnable';
  return 'waiting';
}

/** A snapshot of one actor, for `system.info` and metrics. */
export function processInfo(cell: InspectedCell): ProcessInfo {
  const links = cell.links ? [...cell.links] : [];
  const monitors = cell.monitoring ? [...cell.monitoring.values()] : [];
  const monitoredBy: Ref[] = [];
  if (cell.monitoredBy !== null) {
    for (const watcher of cell.monitoredBy.values()) if (typeof watcher !== 'function') monitoredBy.push(watcher.self);
  }
  const mailboxLength = cell.mailbox?.length ?? 0;
  const timers = cell.timerSet?.size ?? 0;
  return {
    ref: cell.self,
    name: cell.name,
    behaviour: cell.behaviour.name ?? DEFAULT_BEHAVIOUR_NAME,
    status: actorStatus(cell.flags),
    mailboxLength,
    mailboxCapacity: cell.mailboxOptions.capacity,
    messagesHandled: cell.handledCount,
    messagesDropped: cell.droppedCount,
    links,
    monitors,
    monitoredBy,
    trapExit: (cell.flags & TRAP_EXIT) !== 0,
    timers,
    parent: cell.parent,
    memoryEstimate: CELL_BYTES + mailboxLength * MESSAGE_BYTES + (links.length + monitors.length + monitoredBy.length + timers) * EDGE_BYTES,
  };
}

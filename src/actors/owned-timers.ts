import { CellFlag } from './cell-flags.js';
import type { Ref } from './ref.js';
import { TimerEntry, type TimerService } from './timers.js';

const { EXITED } = CellFlag;

/** What an actor's own timers read and set on its cell (an interface, so this module never imports the cell). */
export interface TimerOwner {
  readonly flags: number;
  timerSet: Set<TimerEntry> | null;
  readonly host: { readonly timers: TimerService; send(target: Ref | string, message: unknown): void };
}

interface OwnedTimer {
  readonly cell: TimerOwner;
  readonly message: unknown;
  readonly target: Ref;
  entry: TimerEntry | null;
}

/** `ctx.sendAfter`: a timer the actor owns, so its exit cancels it. */
export function sendAfter(cell: TimerOwner, delayMs: number, message: unknown, target: Ref): TimerEntry {
  // A handler that outlived its actor gets an inactive timer: nothing would release a live one.
  if (cell.flags & EXITED) return new TimerEntry(Infinity, () => {}, null);
  const timers = (cell.timerSet ??= new Set());
  const entry = cell.host.timers.schedule(delayMs, fireOwnedTimer, { cell, message, target, entry: null });
  (entry.arg as OwnedTimer).entry = entry;
  timers.add(entry);
  return entry;
}

/** `ctx.cancelTimer`: true when the timer was the actor's and had not fired yet. */
export function cancelTimer(cell: TimerOwner, timer: TimerEntry): boolean {
  if (cell.timerSet === null || !cell.timerSet.delete(timer)) return false;
  const wasActive = timer.active;
  cell.host.timers.cancel(timer);
  return wasActive;
}

/** At exit: every timer the actor still owns is cancelled. */
export function cancelOwnedTimers(cell: TimerOwner): void {
  if (cell.timerSet === null) return;
  for (const timer of cell.timerSet) cell.host.timers.cancel(timer);
  cell.timerSet = null;
}

function fireOwnedTimer(timer: OwnedTimer): void {
  timer.cell.timerSet?.delete(timer.entry!);
  if (timer.cell.flags & EXITED) return;
  try {
    timer.cell.host.send(timer.target, timer.message);
  } catch {
    // A timer message to a full or dead mailbox is lost, as OTP's would be; the drop is counted there.
  }
}

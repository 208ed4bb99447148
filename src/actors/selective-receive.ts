import { CellFlag } from './cell-flags.js';
import { NotInActor, ReceivePending } from './errors.js';
import type { Mailbox } from './mailbox.js';
import { RECEIVE_TIMEOUT, type ReceiveTimeout } from './messages.js';
import type { Ref } from './ref.js';
import type { TimerEntry, TimerService } from './timers.js';

const { AWAITING, EXITED, RUNNING } = CellFlag;

/** An actor's selective receive waiting for a matching message; an actor has at most one. */
export interface PendingReceive {
  readonly predicate: (message: unknown) => boolean;
  readonly resolve: (message: unknown) => void;
  readonly reject: (error: unknown) => void;
  timer: TimerEntry | null;
}

/** What selective receive reads and sets on a cell (an interface, so this module never imports the cell). */
export interface ReceivingCell {
  readonly flags: number;
  readonly self: Ref;
  readonly mailbox: Mailbox<unknown> | null;
  receiver: PendingReceive | null;
  readonly host: { readonly timers: TimerService };
}

/**
 * `ctx.receive`: takes the first queued message that matches, leaving every other in order, or
 * waits for one (see {@link offerToReceiver}) until `timeoutMs` elapses.
 */
export function selectiveReceive(
  cell: ReceivingCell,
  predicate: (message: unknown) => boolean,
  timeoutMs: number | undefined,
): Promise<unknown | ReceiveTimeout> {
  if ((cell.flags & (RUNNING | AWAITING)) === 0) throw new NotInActor('receive');
  if (cell.receiver !== null) throw new ReceivePending(cell.self);
  const mailbox = cell.mailbox;
  if (mailbox !== null) {
    const index = mailbox.findIndex(predicate);
    if (index >= 0) return Promise.resolve(mailbox.removeAt(index));
  }
  if (timeoutMs === 0) return Promise.resolve(RECEIVE_TIMEOUT);
  // After exit nothing is delivered and no timer may be armed: the receive never settles, as at exit.
  if (cell.flags & EXITED) return new Promise(() => {});
  return new Promise((resolve, reject) => {
    const receiver: PendingReceive = { predicate, resolve, reject, timer: null };
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      receiver.timer = cell.host.timers.schedule(timeoutMs, expireReceive, cell);
    }
    cell.receiver = receiver;
  });
}

/** An arriving message, offered to the pending receive; true when it took it (it is not queued). */
export function offerToReceiver(cell: ReceivingCell, message: unknown): boolean {
  const receiver = cell.receiver!;
  let matches: boolean;
  try {
    matches = receiver.predicate(message);
  } catch (error) {
    // The predicate is the receiver's code running in the sender's stack: its failure goes to the
    // receiver's pending receive (and so to its handler), never to the sender. The message stays queued.
    cell.receiver = null;
    if (receiver.timer !== null) cell.host.timers.cancel(receiver.timer);
    receiver.reject(error);
    return false;
  }
  if (!matches) return false;
  cell.receiver = null;
  if (receiver.timer !== null) cell.host.timers.cancel(receiver.timer);
  receiver.resolve(message);
  return true;
}

/** At exit: the pending receive is dropped unsettled, and its timer cancelled. */
export function dropReceive(cell: ReceivingCell): void {
  const receiver = cell.receiver;
  if (receiver === null) return;
  if (receiver.timer !== null) cell.host.timers.cancel(receiver.timer);
  cell.receiver = null;
}

function expireReceive(cell: ReceivingCell): void {
  const receiver = cell.receiver;
  if (receiver === null) return;
  cell.receiver = null;
  receiver.resolve(RECEIVE_TIMEOUT);
}

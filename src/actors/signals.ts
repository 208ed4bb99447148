import { ActorCell } from './actor-cell.js';
import { CellFlag } from './cell-flags.js';
import type { ExitReason } from './exit.js';
import { DownMessage, ExitMessage } from './messages.js';
import type { MonitorRef, Ref } from './ref.js';
import type { Router, Watcher } from './placement/router.js';

const { EXITED, TRAP_EXIT } = CellFlag;

/** What exit signals need from their system. */
export interface SignalHost {
  /** The live local actor `ref` names, compared by value (a ref rebuilt from its parts finds it too). */
  cellOf(ref: Ref): ActorCell | undefined;
  /**
   * Carries signals to and from an actor elsewhere (another creation or node); undefined for this
   * system's own refs and when nothing routes the ref.
   */
  routeOf(ref: Ref): Router | undefined;
  /** Exits `cell` with `reason` now, without running `terminate`, and propagates. */
  terminateCell(cell: ActorCell, reason: ExitReason): void;
  /** Runs a kernel hook (an exit watcher) so that one that throws is counted and logged, not propagated. */
  runHook(hook: () => void): void;
}

/**
 * Exit signals, links and monitors, as OTP has them. Links are symmetric (a set of refs on each
 * cell); a monitor is held twice, as `monitoring` on its watcher and `monitoredBy` on its target,
 * so either side's exit drops it in O(1). An actor elsewhere is its router's business.
 * Refs are resolved by value (`host.cellOf`), and what goes into a link set or a monitor map is
 * the canonical object (the cell's own ref, or the router's), so a set keyed by identity still
 * finds an entry made through a ref rebuilt from its parts.
 * What an exit sets off (signals to links, `DOWN` to watchers) is walked by the system's
 * `#finalize`, with {@link linkSignal} and {@link notify} from here.
 */
export class ExitSignals {
  #nextMonitor = 0;

  constructor(readonly host: SignalHost) {}

  /** OTP's exit/2: `kill` is untrappable; a trapping target gets a message; `normal` is ignored. */
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void {
    const cell = this.host.cellOf(target);
    if (cell === undefined) {
      this.host.routeOf(target)?.exitSignal(target, from, reason);
      return;
    }
    if (reason === 'kill') this.host.terminateCell(cell, 'killed');
    else if (cell.flags & TRAP_EXIT) cell.deliverSignal(new ExitMessage(from, reason));
    else if (reason !== 'normal' || from.equals(target)) this.host.terminateCell(cell, reason);
  }

  /** A linked actor exited: the same rules, except that a link never carries an untrappable kill. */
  linkSignal(cell: ActorCell, from: Ref, reason: ExitReason): void {
    if (cell.flags & TRAP_EXIT) cell.deliverSignal(new ExitMessage(from, reason));
    else if (reason !== 'normal') this.host.terminateCell(cell, reason);
  }

  /**
   * A linked actor elsewhere exited: `target` drops the link and gets the signal, if still linked.
   * A `target` elsewhere too is a link this system relays (a placed actor's with another node's
   * actor): the signal goes on to its route.
   */
  linkExit(target: Ref, from: Ref, reason: ExitReason): void {
    const cell = this.host.cellOf(target);
    if (cell === undefined) {
      this.host.routeOf(target)?.linkExited(target, from, reason);
      return;
    }
    if (cell.links === null || !cell.links.delete(from)) return;
    this.linkSignal(cell, from, reason);
  }

  link(cell: ActorCell, target: Ref): void {
    const other = this.host.cellOf(target);
    // An exited actor (a handler that outlived it) links to nothing: no stale entry on the target.
    if (other === cell || cell.flags & EXITED) return;
    if (other === undefined) {
      const router = this.host.routeOf(target);
      if (router !== undefined) {
        const remote = router.canonical(target);
        (cell.links ??= new Set()).add(remote);
        router.link(cell.self, remote);
        return;
      }
      this.linkSignal(cell, target, 'noproc');
      return;
    }
    (cell.links ??= new Set()).add(other.self);
    (other.links ??= new Set()).add(cell.self);
  }

  unlink(cell: ActorCell, target: Ref): void {
    const other = this.host.cellOf(target);
    if (other !== undefined) {
      cell.links?.delete(other.self);
      other.links?.delete(cell.self);
      return;
    }
    const router = this.host.routeOf(target);
    if (router === undefined) {
      cell.links?.delete(target);
      return;
    }
    const remote = router.canonical(target);
    cell.links?.delete(remote);
    router.unlink(cell.self, remote);
  }

  nextMonitorId(): number {
    return ++this.#nextMonitor;
  }

  /** A monitor of `target` held by `watcher`; a target that is not alive gives `noproc` at once. */
  monitor(watcher: Watcher, target: Ref): MonitorRef {
    const id = ++this.#nextMonitor;
    if (watcher instanceof ActorCell && watcher.flags & EXITED) return id;
    const cell = this.host.cellOf(target);
    if (cell === undefined) {
      const router = this.host.routeOf(target);
      if (router !== undefined) {
        if (watcher instanceof ActorCell) (watcher.monitoring ??= new Map()).set(id, target);
        router.monitor(watcher, target, id);
        return id;
      }
      this.notify(watcher, id, target, 'noproc');
      return id;
    }
    (cell.monitoredBy ??= new Map()).set(id, watcher);
    if (watcher instanceof ActorCell) (watcher.monitoring ??= new Map()).set(id, cell.self);
    return id;
  }

  demonitor(watcher: ActorCell, monitor: MonitorRef): void {
    const target = watcher.monitoring?.get(monitor);
    if (target === undefined) return;
    watcher.monitoring!.delete(monitor);
    this.#forget(target, monitor);
  }

  /** A kernel callback's monitor (`system.watch`); the returned function removes it. */
  watch(target: Ref, callback: (reason: ExitReason, ref: Ref) => void): () => void {
    const id = this.monitor(callback, target);
    return () => this.#forget(target, id);
  }

  /** The target's side of monitor `id`. */
  #forget(target: Ref, id: MonitorRef): void {
    const cell = this.host.cellOf(target);
    if (cell !== undefined) cell.monitoredBy?.delete(id);
    else this.host.routeOf(target)?.demonitor(target, id);
  }

  /** `DOWN` for one monitor of an exited (or never alive) actor: a message to an actor, a call to a callback. */
  notify(watcher: Watcher, id: MonitorRef, ref: Ref, reason: ExitReason): void {
    if (watcher instanceof ActorCell) {
      watcher.monitoring?.delete(id);
      watcher.deliverSignal(new DownMessage(id, ref, reason));
    } else {
      this.host.runHook(() => watcher(reason, ref));
    }
  }
}

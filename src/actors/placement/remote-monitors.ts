import { ActorCell } from '../actor-cell.js';
import type { ExitReason } from '../exit.js';
import { DownMessage } from '../messages.js';
import type { MonitorRef, Ref } from '../ref.js';
import { FrameKind } from './frames.js';
import type { Watcher } from './router.js';
import type { RouterPort } from './router-port.js';

/**
 * The monitors a router carries across its boundary, both ways, so that a system's death turns into
 * the right signals on this side:
 * - `#monitors`: monitors local watchers hold on remote actors;
 * - `#watched`: monitors remote watchers hold on local actors, by the watchers' creation.
 */
export class RemoteMonitors {
  readonly #monitors = new Map<MonitorRef, { readonly watcher: Watcher; readonly target: Ref }>();
  readonly #watched = new Map<number, Map<MonitorRef, () => void>>();

  constructor(private readonly port: RouterPort) {}

  // ---- outgoing: the kernel's hooks ----------------------------------------------------------

  monitor(watcher: Watcher, target: Ref, id: MonitorRef): void {
    const port = this.port;
    if (!port.reachable(target.creation)) {
      deliverDown(watcher, id, target, 'noproc');
      return;
    }
    this.#monitors.set(id, { watcher, target });
    port.post(target.creation, [FrameKind.Monitor, port.creation, id, target]);
  }

  demonitor(target: Ref, id: MonitorRef): void {
    if (!this.#monitors.delete(id)) return;
    const port = this.port;
    if (port.reachable(target.creation)) port.post(target.creation, [FrameKind.Demonitor, port.creation, id, target]);
  }

  // ---- incoming frames (their addresses already checked) ---------------------------------------

  /** A watcher of the system `origin` monitors `target`, an actor here. */
  watch(origin: number, id: MonitorRef, target: Ref): void {
    let fired = false;
    const unwatch = this.port.system.watch(target, (reason, ref) => {
      fired = true;
      this.#watched.get(origin)?.delete(id);
      this.port.signal(origin, reason, (sent) => [FrameKind.Down, id, ref, sent]);
    });
    if (fired) return;
    let watched = this.#watched.get(origin);
    if (watched === undefined) this.#watched.set(origin, (watched = new Map()));
    watched.set(id, unwatch);
  }

  unwatch(origin: number, id: MonitorRef): void {
    const watched = this.#watched.get(origin);
    const unwatch = watched?.get(id);
    if (unwatch === undefined) return;
    watched!.delete(id);
    unwatch();
  }

  /** A DOWN arrived for monitor `id`: its watcher, when it was this side's monitor on `ref` (now ended). */
  takeDown(id: MonitorRef, ref: Ref): Watcher | undefined {
    const monitor = this.#monitors.get(id);
    // By value: the monitor may have been made through a ref rebuilt from its parts.
    if (monitor === undefined || !monitor.target.equals(ref)) return undefined;
    this.#monitors.delete(id);
    return monitor.watcher;
  }

  /** The system `origin` is gone: the monitors its watchers held here are dropped. */
  forget(origin: number): void {
    const watched = this.#watched.get(origin);
    if (watched === undefined) return;
    this.#watched.delete(origin);
    for (const unwatch of watched.values()) unwatch();
  }

  /** Takes out the monitors on remote actors that `gone` matches, for their DOWNs. */
  take(gone: (ref: Ref) => boolean): [MonitorRef, Watcher, Ref][] {
    const taken: [MonitorRef, Watcher, Ref][] = [];
    for (const [id, monitor] of this.#monitors) {
      if (!gone(monitor.target)) continue;
      this.#monitors.delete(id);
      taken.push([id, monitor.watcher, monitor.target]);
    }
    return taken;
  }

  get size(): number {
    return this.#monitors.size;
  }

  get watchedSize(): number {
    let watched = 0;
    for (const byOrigin of this.#watched.values()) watched += byOrigin.size;
    return watched;
  }
}

/** A DOWN for a watcher: an actor gets the message (and forgets the monitor), a callback is called. */
export function deliverDown(watcher: Watcher, id: MonitorRef, ref: Ref, reason: ExitReason): void {
  if (watcher instanceof ActorCell) {
    watcher.monitoring?.delete(id);
    watcher.deliverSignal(new DownMessage(id, ref, reason));
  } else {
    watcher(reason, ref);
  }
}

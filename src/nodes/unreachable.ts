/**
 * The kernel's route to nodes that are not connected: as in Erlang, a send is dropped (counted), a
 * monitor fires at once with `noconnection`, a link gets the `noconnection` exit, and a call fails
 * at once with NodeDown.
 */
import type { CallRequest } from '../actors/messages.js';
import type { MonitorRef, Ref } from '../actors/ref.js';
import { deliverDown } from '../actors/placement/remote-monitors.js';
import type { RoutedSystem, Router, Watcher } from '../actors/placement/router.js';
import { NodeDown } from './errors.js';

export class Unreachable implements Router {
  /** Sends to actors of nodes not connected, dropped. */
  dropped = 0;

  constructor(
    readonly system: RoutedSystem,
    readonly onShutdown: () => void,
  ) {}

  send(): void {
    this.dropped++;
  }

  sendName(): boolean {
    return false;
  }

  /** `cause`: why the node could not be reached, when an attempt to connect just failed. */
  call(call: CallRequest, cause?: unknown): void {
    throw new NodeDown(call.callee.node, String(call.callee), cause === undefined ? undefined : { cause });
  }

  whereis(): Ref | undefined {
    return undefined;
  }

  exitSignal(): void {}

  link(from: Ref, target: Ref): void {
    // Never in the linking actor's stack: as if the signal had come back over a link.
    queueMicrotask(() => this.system.linkExit(from, target, 'noconnection'));
  }

  unlink(): void {}

  linkExited(): void {}

  monitor(watcher: Watcher, target: Ref, id: MonitorRef): void {
    queueMicrotask(() => {
      // Demonitored meanwhile: no DOWN.
      if (typeof watcher !== 'function' && watcher.monitoring?.has(id) !== true) return;
      deliverDown(watcher, id, target, 'noconnection');
    });
  }

  demonitor(): void {}

  registered(): void {}

  unregistered(): void {}

  isAlive(): boolean {
    return false;
  }

  /** Nothing is kept here: a link is answered at once, with the ref it was made with. */
  canonical(ref: Ref): Ref {
    return ref;
  }

  shutdown(): void {
    this.onShutdown();
  }
}

import { CellFlag } from '../cell-flags.js';
import type { ExitReason } from '../exit.js';
import type { Ref } from '../ref.js';
import { FrameKind } from './frames.js';
import type { RefTable } from './ref-table.js';
import type { Router } from './router.js';
import type { RouterPort } from './router-port.js';

const { EXITED } = CellFlag;

/**
 * The links a router carries across its boundary: remote ref → the local refs linked to it (both
 * directions: a link is symmetric), so that the other side's death turns into exit signals here.
 *
 * Links are keyed by this side's canonical refs: a relayed link arrives with refs decoded by
 * another table (a node's, or placement's), and the frames that end it are decoded by this one.
 */
export class RemoteLinks {
  readonly #links = new Map<Ref, Set<Ref>>();

  constructor(
    private readonly port: RouterPort,
    private readonly refs: RefTable,
  ) {}

  // ---- outgoing: the kernel's hooks ----------------------------------------------------------

  link(from: Ref, target: Ref): void {
    const port = this.port;
    if (!port.reachable(target.creation)) {
      port.system.linkExit(from, target, 'noproc');
      return;
    }
    this.#add(this.refs.canonical(target), this.refs.canonical(from));
    port.post(target.creation, [FrameKind.Link, from, target]);
  }

  unlink(from: Ref, target: Ref): void {
    if (!this.#remove(this.refs.canonical(target), this.refs.canonical(from))) return;
    if (this.port.reachable(target.creation)) this.port.post(target.creation, [FrameKind.Unlink, from, target]);
  }

  linkExited(target: Ref, from: Ref, reason: ExitReason): void {
    this.#remove(this.refs.canonical(target), this.refs.canonical(from));
    this.port.signal(target.creation, reason, (sent) => [FrameKind.LinkExit, target, from, sent]);
  }

  // ---- incoming frames (their addresses already checked) ---------------------------------------

  /** `remote` links to `to`, an actor this system accepts frames for. */
  linked(remote: Ref, to: Ref): void {
    const cell = this.port.system.cellOf(to);
    if (cell === undefined) {
      const relay = this.#relayOf(to);
      if (relay !== undefined) {
        // Added first: a relay that answers `noproc` at once removes it again.
        this.#add(remote, to);
        relay.link(remote, to);
        return;
      }
    }
    if (cell === undefined || cell.flags & EXITED) {
      this.port.signal(remote.creation, 'noproc', (reason) => [FrameKind.LinkExit, remote, to, reason]);
      return;
    }
    (cell.links ??= new Set()).add(remote);
    this.#add(remote, to);
  }

  unlinked(remote: Ref, to: Ref): void {
    if (!this.#remove(remote, to)) return;
    const cell = this.port.system.cellOf(to);
    if (cell !== undefined) cell.links?.delete(remote);
    else this.#relayOf(to)?.unlink(remote, to);
  }

  /** `remote`, linked to `to`, exited: the link is gone (the router delivers the signal). */
  exited(to: Ref, remote: Ref): void {
    this.#remove(remote, to);
  }

  /** Takes out the links to remote actors that `gone` matches, for their exit signals. */
  take(gone: (ref: Ref) => boolean): [Ref, Set<Ref>][] {
    const taken: [Ref, Set<Ref>][] = [];
    for (const entry of this.#links) {
      if (!gone(entry[0])) continue;
      this.#links.delete(entry[0]);
      taken.push(entry);
    }
    return taken;
  }

  get size(): number {
    let links = 0;
    for (const locals of this.#links.values()) links += locals.size;
    return links;
  }

  /**
   * The router that carries links on to `to`, an actor this system accepts frames for but does not
   * hold: one placed in a host (for a peer node) or another node's (for a host). The exits and
   * unlinks that follow take the same way back: the kernel routes a link exit whose target is not
   * its own (see `linkExit`).
   */
  #relayOf(to: Ref): Router | undefined {
    const relay = this.port.system.routeOf(to);
    return relay === this.port.router ? undefined : relay;
  }

  #add(remote: Ref, local: Ref): void {
    let locals = this.#links.get(remote);
    if (locals === undefined) this.#links.set(remote, (locals = new Set()));
    locals.add(local);
  }

  #remove(remote: Ref, local: Ref): boolean {
    const locals = this.#links.get(remote);
    if (locals === undefined || !locals.delete(local)) return false;
    if (locals.size === 0) this.#links.delete(remote);
    return true;
  }
}

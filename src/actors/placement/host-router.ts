import type { ActorCell } from '../actor-cell.js';
import type { ExitReason } from '../exit.js';
import type { Ref } from '../ref.js';
import { loadBehaviour } from './behaviour-module.js';
import { FrameKind, type ModuleSpec, type SpawnStage, type WireSpawnOptions } from './frames.js';
import type { HostInit } from './host-channel.js';
import { RouterCore } from './router-core.js';
import type { RoutedSystem } from './router.js';
import type { SendMode } from './frame-link.js';
import { frameDestination, HEADER_BYTES } from './wire.js';

/** How a host reaches its parent. */
export interface ParentChannel {
  /** Queues a frame; false when a `user` frame does not fit the in-flight budget. */
  send(bytes: Uint8Array, mode: SendMode): boolean;
  /** Ends the host (thread or process) with exit code 0. */
  exit(): void;
  /** @internal Writes onto the channel unframed: for tests that play a hostile host. */
  raw(data: unknown): void;
}

/**
 * A host's router: everything that is not local goes to the parent (the main system), which
 * forwards it. The host keeps a mirror of the node's names so that sends and calls by name resolve
 * here; a name it does not know is forwarded to the parent, which may know it already.
 */
export class HostRouter extends RouterCore {
  readonly #parent: number;
  readonly #names = new Map<string, Ref>();
  #pendingSpawns = 0;
  #idleQueued = false;

  constructor(
    system: RoutedSystem,
    init: HostInit,
    readonly channel: ParentChannel,
  ) {
    super(system);
    this.#parent = init.parent;
  }

  /**
   * A frame from the parent. Its header names the system it comes from: the parent itself, or the
   * host whose frame the parent forwarded (checked like any frame from another system).
   */
  receive(bytes: Uint8Array): void {
    const from = frameDestination(bytes);
    if (from === undefined || from === this.creation || bytes.byteLength <= HEADER_BYTES) {
      this.stats.framesReceived++;
      this.stats.framesDropped++;
      return;
    }
    this.receiveFrame(bytes, from);
  }

  protected override trusts(from: number): boolean {
    return from === this.#parent || super.trusts(from);
  }

  protected headerFor(destination: number): number {
    return destination;
  }

  protected transmit(_destination: number, bytes: Uint8Array, mode: SendMode): boolean {
    return this.channel.send(bytes, mode);
  }

  protected reachable(creation: number): boolean {
    return !this.down.has(creation);
  }

  protected control(frame: Parameters<RouterCore['control']>[0]): void {
    switch (frame[0]) {
      case FrameKind.NameAdd:
        this.#names.set(frame[1], frame[2]);
        return;
      case FrameKind.NameRemove:
        if (this.#names.get(frame[1]) === frame[2]) this.#names.delete(frame[1]);
        return;
      case FrameKind.Spawn:
        void this.#spawn(frame[1], frame[2], frame[3]);
        return;
      case FrameKind.Stop:
        this.channel.exit();
        return;
      case FrameKind.SendName: {
        try {
          this.system.send(frame[1], frame[2]);
        } catch {
          this.stats.messagesDropped++;
        }
        return;
      }
      case FrameKind.Spawned:
      case FrameKind.SpawnFailed:
      case FrameKind.Idle:
        throw new TypeError('a parent does not send this');
      default: {
        const unknown: never = frame;
        throw new TypeError(`unknown frame ${String((unknown as readonly unknown[])[0])}`);
      }
    }
  }

  protected override hostDown(creation: number, reason: ExitReason): void {
    for (const [name, ref] of this.#names) if (ref.creation === creation) this.#names.delete(name);
    super.hostDown(creation, reason);
  }

  // ---- spawning -------------------------------------------------------------------------------

  async #spawn(id: number, [moduleUrl, exportName, args]: ModuleSpec, options: WireSpawnOptions): Promise<void> {
    this.#pendingSpawns++;
    const fail = (reason: ExitReason, stage: SpawnStage): void => {
      this.#pendingSpawns--;
      this.signal(this.#parent, reason, (sent) => [FrameKind.SpawnFailed, id, sent, stage]);
      this.actorExited();
    };
    let behaviour: Awaited<ReturnType<typeof loadBehaviour>>;
    try {
      behaviour = await loadBehaviour(moduleUrl, exportName, args);
    } catch (error) {
      fail(asError(error), 'load');
      return;
    }
    const link = options.link;
    let ref: Ref | undefined;
    try {
      ref = this.system.spawn(behaviour, {
        name: options.name,
        trapExit: options.trapExit,
        mailbox: options.mailbox as never,
        parent: link,
        onStarted: (error) => {
          // A failed init does not take its linker down: unlinked now, before the exit propagates.
          const cell = ref?._cell as ActorCell | undefined;
          if (error !== undefined && link !== undefined && cell !== undefined) this.system.unlinkCells(cell, link);
          // Deferred: the link (made right after spawn) goes out before the answer.
          queueMicrotask(() => this.#started(id, ref!, error));
        },
      });
    } catch (error) {
      fail(asError(error), 'spawn');
      return;
    }
    // Linked before init runs (init waits for the run queue): the parent side learns of it first.
    if (link !== undefined) this.system.linkCells(ref._cell as ActorCell, link);
  }

  #started(id: number, ref: Ref, error: ExitReason | undefined): void {
    if (error === undefined) {
      this.#pendingSpawns--;
      this.post(this.#parent, [FrameKind.Spawned, id, ref]);
      return;
    }
    // Reported once the actor is gone, so its name is free again.
    void this.system.exited(ref).then(() => {
      this.#pendingSpawns--;
      this.signal(this.#parent, error, (sent) => [FrameKind.SpawnFailed, id, sent, 'init']);
      this.actorExited();
    });
  }

  /** After any exit: a host with no actor left tells its parent, which stops it. */
  actorExited(): void {
    if (this.#idleQueued) return;
    this.#idleQueued = true;
    setImmediate(() => {
      this.#idleQueued = false;
      if (this.system.actorCount === 0 && this.#pendingSpawns === 0) this.post(this.#parent, [FrameKind.Idle]);
    });
  }

  // ---- Router -------------------------------------------------------------------------------

  sendName(name: string, message: unknown): boolean {
    const ref = this.#names.get(name);
    if (ref !== undefined) this.send(ref, message);
    else this.post(this.#parent, [FrameKind.SendName, name, message]);
    return true;
  }

  whereis(name: string): Ref | undefined {
    return this.#names.get(name);
  }

  registered(name: string, ref: Ref): void {
    this.post(this.#parent, [FrameKind.NameAdd, name, ref]);
  }

  unregistered(name: string, ref: Ref): void {
    this.post(this.#parent, [FrameKind.NameRemove, name, ref]);
  }

  shutdown(): void {
    this.channel.exit();
  }
}

function asError(error: unknown): ExitReason {
  return error instanceof Error ? error : new Error(String(error));
}

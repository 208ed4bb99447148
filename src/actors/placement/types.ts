/**
 * The types of placement that the kernel's public interfaces name (ActorRuntime.spawnPlaced), kept
 * apart from the placement machinery so that naming them imports none of it.
 */
import type { MailboxOptions } from '../mailbox.js';
import type { Ref } from '../ref.js';

/** Where an actor runs: this event loop, a worker thread, or a child process. */
export type Placement = 'loop' | 'thread' | 'process';

/**
 * Where a placed actor's logic lives: a module and one of its exports, which is an ActorBehaviour
 * or a function returning one (called with `args`; it may be async). A thread or process host
 * imports the module itself, so the logic never has to cross the boundary; only `args` do, encoded.
 * `S` is a phantom type for typed refs (`GenServer.startPlaced`).
 */
export interface BehaviourModule<S = unknown> {
  readonly moduleUrl: string;
  readonly exportName: string;
  readonly args: readonly unknown[];
  /** @internal phantom: the server type a GenServer module starts. */
  readonly __server?: S;
}

/** Options of `system.spawnPlaced`. */
export interface PlacedSpawnOptions {
  /** `loop` (default: this event loop), `thread` (a worker thread) or `process` (a child process). */
  readonly placement?: Placement;
  /** Registers the actor under this name; the name is known to every system of the node. */
  readonly name?: string;
  /** Links the new actor to this one before its init runs. */
  readonly link?: Ref;
  readonly trapExit?: boolean;
  readonly mailbox?: MailboxOptions;
  /**
   * Co-locates the actor in the named host (started on first use, with this placement); without
   * it every placed actor gets a host of its own. A host stops when its last actor exits.
   */
  readonly host?: string;
  /**
   * Heap cap of the host started for this spawn (V8 old generation, MB); a host over it dies as out
   * of memory, and its actors' links and monitors see that. Ignored when joining a running host.
   */
  readonly maxHeapMb?: number;
  /**
   * Frame cap of the host started for this spawn (bytes of one message to or from it, frame fields
   * included), at most MAX_PAYLOAD_LIMIT_BYTES; never below the system's `payloadLimitBytes`. For a host
   * whose messages are larger than the rest (a task host takes a 1 MiB payload plus its envelope).
   * Ignored when joining a running host.
   */
  readonly payloadLimitBytes?: number;
  /**
   * @internal The host will only ever run Molo's own modules (a SQLite database's threads): running
   * from source, a thread host then loads a bundle of them instead of tsx (source-bundle.ts).
   */
  readonly ownModulesOnly?: boolean;
}

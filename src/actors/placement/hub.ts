import { InvalidPlacement, NameTaken, NoProc, PlacementFailed, SystemStopped } from '../errors.js';
import type { ExitReason, ShutdownWith } from '../exit.js';
import { resolveMailboxOptions, type ResolvedMailboxOptions } from '../mailbox.js';
import type { Ref } from '../ref.js';
import { checkBehaviourModule, loadBehaviour } from './behaviour-module.js';
import type { BehaviourModule, PlacedSpawnOptions } from './types.js';

export type { PlacedSpawnOptions } from './types.js';
import { FrameKind, type Frame, type WireSpawnOptions } from './frames.js';
import { startHost, type HostPlacement } from './host-channel.js';
import { ownModulesBundle, type HostBundle } from './source-bundle.js';
import { HostRelay, type PlacedHost } from './host-relay.js';
import { registerHostDirectory, type HostDirectory, type HostInfo } from './hosts.js';
import type { RouterCore } from './router-core.js';
import type { RoutedSystem } from './router.js';
import { encodeFrame } from './wire.js';
import { MAX_PAYLOAD_LIMIT_BYTES } from './limits.js';

interface PendingSpawn {
  readonly host: PlacedHost;
  readonly mailbox: ResolvedMailboxOptions;
  resolve(ref: Ref): void;
  reject(error: unknown): void;
}

const PLACEMENTS: ReadonlySet<string> = new Set(['loop', 'thread', 'process']);
const MAX_CREATION = 0x7fff_ffff;

const hubs = new WeakMap<RoutedSystem, PlacementHub>();

/** The placement hub of `system`, made (and installed as its router) on first use. */
export function placementHub(system: RoutedSystem): PlacementHub {
  let hub = hubs.get(system);
  if (hub === undefined) {
    hub = new PlacementHub(system);
    try {
      system.setRouter(hub);
    } catch {
      // A host's system routes through its parent.
      throw new InvalidPlacement('placement', 'thread and process actors are spawned from the main system, not inside a host');
    }
    hubs.set(system, hub);
    registerHostDirectory(system, hub);
  }
  return hub;
}

/** `system.spawnPlaced`: checks what every placement shares, then spawns here or in a host. */
export async function spawnPlaced(system: RoutedSystem, spec: BehaviourModule, options: PlacedSpawnOptions = {}): Promise<Ref> {
  if (system.stopped) throw new SystemStopped(system.node);
  checkBehaviourModule(spec);
  const placement = options.placement ?? 'loop';
  if (!PLACEMENTS.has(placement)) {
    throw new InvalidPlacement('placement', `must be loop, thread or process, got ${String(placement)}`);
  }
  if (options.name !== undefined) {
    const holder = system.whereis(options.name);
    if (holder !== undefined) throw new NameTaken(options.name, holder);
  }
  if (options.link !== undefined && !system.isAlive(options.link)) throw new NoProc(options.link);
  if (placement !== 'loop') return placementHub(system).spawnInHost(spec, placement, options);
  if (options.host !== undefined) throw new InvalidPlacement('host', 'only thread and process placements run in hosts');
  if (options.maxHeapMb !== undefined) throw new InvalidPlacement('maxHeapMb', 'only thread and process placements run in hosts');
  if (options.payloadLimitBytes !== undefined) throw new InvalidPlacement('payloadLimitBytes', 'only thread and process placements run in hosts');
  return spawnLocal(system, spec, options);
}

/** `loop`: the module is imported here and the actor spawned on this system. */
async function spawnLocal(system: RoutedSystem, spec: BehaviourModule, options: PlacedSpawnOptions): Promise<Ref> {
  let behaviour: Awaited<ReturnType<typeof loadBehaviour>>;
  try {
    behaviour = await loadBehaviour(spec.moduleUrl, spec.exportName, spec.args);
  } catch (error) {
    // As from a host: what went wrong is the reason.
    throw new PlacementFailed(error instanceof Error ? error : new Error(String(error)), 'could not load the behaviour');
  }
  return new Promise<Ref>((resolve, reject) => {
    const ref: Ref = system.spawn(behaviour, {
      name: options.name,
      link: options.link,
      parent: options.link,
      trapExit: options.trapExit,
      mailbox: options.mailbox,
      onStarted: (error) => {
        // Deferred: without an init this runs inside spawn, before `ref` is assigned.
        queueMicrotask(() => {
          if (error === undefined) resolve(ref);
          // Reported once the actor is gone, so its name is free again.
          else void system.exited(ref).then(() => reject(new PlacementFailed(error, 'init failed')));
        });
      },
    });
  });
}

/**
 * The main system's side of placement. Hosts talk only to it: it starts them, forwards frames
 * between them (by the header, without decoding), keeps the node-wide registry of names held in
 * hosts, and turns a host's death into exit signals here and in every other host.
 */
export class PlacementHub extends HostRelay implements HostDirectory {
  readonly #named = new Map<string, PlacedHost>();
  readonly #spawns = new Map<number, PendingSpawn>();
  /** Names registered in hosts. */
  readonly #remoteNames = new Map<string, Ref>();
  readonly #exits = new Set<Promise<void>>();
  #nextSpawn = 0;
  #stopped = false;

  // ---- spawning ---------------------------------------------------------------------------

  /** `thread` or `process`; see {@link spawnPlaced}, which has checked what every placement shares. */
  async spawnInHost(spec: BehaviourModule, placement: HostPlacement, options: PlacedSpawnOptions): Promise<Ref> {
    if (this.#stopped) throw new SystemStopped(this.system.node);
    const mailbox = resolveMailboxOptions(options.mailbox);
    if (options.host !== undefined && (typeof options.host !== 'string' || options.host.length === 0)) {
      throw new InvalidPlacement('host', 'must be a non-empty string');
    }
    const maxHeapMb = options.maxHeapMb;
    if (maxHeapMb !== undefined && (!Number.isInteger(maxHeapMb) || maxHeapMb < 8 || maxHeapMb > 1_048_576)) {
      throw new InvalidPlacement('maxHeapMb', `must be an integer number of MB in 8..1048576, got ${maxHeapMb}`);
    }
    const requested = options.payloadLimitBytes;
    if (requested !== undefined && (!Number.isInteger(requested) || requested < 1 || requested > MAX_PAYLOAD_LIMIT_BYTES)) {
      throw new InvalidPlacement('payloadLimitBytes', `must be an integer number of bytes in 1..${MAX_PAYLOAD_LIMIT_BYTES}, got ${requested}`);
    }
    // Never below the system's: every frame the system may send must fit.
    const limitBytes = Math.max(requested ?? 0, this.limitBytes);
    const wireOptions: WireSpawnOptions = {
      name: options.name,
      trapExit: options.trapExit,
      mailbox: options.mailbox,
      link: options.link,
    };
    const id = ++this.#nextSpawn;
    // Encoded before a host starts: arguments over the cap fail here, typed, and start nothing.
    const bytes = encodeFrame(this.creation, [FrameKind.Spawn, id, [spec.moduleUrl, spec.exportName, spec.args], wireOptions], this.limitBytes);
    const bundle = placement === 'thread' && options.ownModulesOnly === true ? () => ownModulesBundle(spec.moduleUrl) : undefined;
    const host = this.#hostFor(placement, options.host, maxHeapMb, limitBytes, bundle);
    return new Promise<Ref>((resolve, reject) => {
      this.#spawns.set(id, { host, mailbox, resolve, reject });
      host.pendingSpawns++;
      this.stats.framesSent++;
      this.transmit(host.creation, bytes, 'signal');
    });
  }

  #hostFor(placement: HostPlacement, name: string | undefined, maxHeapMb: number | undefined, limitBytes: number, bundle: (() => HostBundle | undefined) | undefined): PlacedHost {
    if (name !== undefined) {
      const named = this.#named.get(name);
      if (named !== undefined && named.state === 'running') {
        if (named.placement !== placement) {
          throw new InvalidPlacement('host', `host '${name}' runs ${named.placement} actors, not ${placement}`);
        }
        return named;
      }
    }
    const host = this.#startHost(placement, name, maxHeapMb, limitBytes, bundle?.());
    if (name !== undefined) this.#named.set(name, host);
    return host;
  }

  #newCreation(): number {
    for (;;) {
      const creation = 1 + Math.floor(Math.random() * (MAX_CREATION - 1));
      // Never reused while this system lives: a stale ref must never reach a later host.
      if (creation !== this.creation && !this.placed.has(creation) && !this.down.has(creation)) return creation;
    }
  }

  #startHost(placement: HostPlacement, name: string | undefined, maxHeapMb: number | undefined, limitBytes: number, bundle: HostBundle | undefined): PlacedHost {
    const creation = this.#newCreation();
    let host!: PlacedHost;
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const channel = startHost(
      {
        node: this.system.node,
        creation,
        parent: this.creation,
        payloadLimitBytes: limitBytes,
        callTimeoutMs: this.system.callTimeoutMs,
        placement,
        maxHeapMb,
      },
      {
        record: (bytes) => this.receiveFrom(host, bytes),
        violation: () => this.#cutOff(host),
        exit: (reason, error) => {
          this.#hostExited(host, reason, error);
          markExited();
        },
      },
      bundle,
    );
    host = { creation, placement, name, channel, state: 'running', cut: false, pendingSpawns: 0, limitBytes, terminated: undefined, exited };
    this.placed.set(creation, host);
    this.#exits.add(exited);
    void exited.then(() => this.#exits.delete(exited));
    // The host starts knowing every name of the node.
    for (const registered of this.system.registered()) {
      const ref = this.system.whereis(registered);
      if (ref !== undefined) this.#postTo(host, [FrameKind.NameAdd, registered, ref]);
    }
    for (const [registered, ref] of this.#remoteNames) this.#postTo(host, [FrameKind.NameAdd, registered, ref]);
    return host;
  }

  #postTo(host: PlacedHost, frame: Frame): void {
    try {
      this.post(host.creation, frame);
    } catch {
      this.stats.framesDropped++;
    }
  }

  #broadcast(frame: Frame, except?: number): void {
    for (const host of this.placed.values()) if (host.creation !== except) this.#postTo(host, frame);
  }

  #stopHost(host: PlacedHost, tell = true): void {
    if (host.state === 'stopping') return;
    host.state = 'stopping';
    if (host.name !== undefined && this.#named.get(host.name) === host) this.#named.delete(host.name);
    if (tell) this.#postTo(host, [FrameKind.Stop]);
  }

  // ---- frames (forwarded in host-relay.ts) -------------------------------------------------

  /** `host` broke its channel's rules: it is cut off now (nothing more from it counts) and killed. */
  #cutOff(host: PlacedHost): void {
    this.stats.channelViolations++;
    host.cut = true;
    this.#stopHost(host, false);
  }

  protected control(frame: Parameters<RouterCore['control']>[0], from: number): void {
    switch (frame[0]) {
      case FrameKind.SendName: {
        const [, name, message] = frame;
        try {
          this.system.send(name, message);
        } catch {
          this.stats.messagesDropped++;
        }
        return;
      }
      case FrameKind.NameAdd: {
        const [, name, ref] = frame;
        if (ref.creation !== from) throw new TypeError('misaddressed');
        // First come, first served: a name taken meanwhile stays with its holder (and local to the host).
        if (this.system.whereis(name) !== undefined) return;
        this.#remoteNames.set(name, ref);
        this.#broadcast(frame, from);
        return;
      }
      case FrameKind.NameRemove: {
        const [, name, ref] = frame;
        if (this.#remoteNames.get(name)?.equals(ref) !== true) return;
        this.#remoteNames.delete(name);
        this.#broadcast(frame, from);
        return;
      }
      case FrameKind.Spawned: {
        const pending = this.#takeSpawn(frame[1], from);
        if (pending === undefined) return;
        this.mailboxes.set(frame[2], pending.mailbox);
        pending.resolve(frame[2]);
        return;
      }
      case FrameKind.SpawnFailed: {
        const [, id, reason, stage] = frame;
        const pending = this.#takeSpawn(id, from);
        pending?.reject(new PlacementFailed(reason, stage === 'init' ? 'init failed' : `could not ${stage} the behaviour`));
        return;
      }
      case FrameKind.Idle: {
        const host = this.placed.get(from);
        if (host !== undefined && host.pendingSpawns === 0) this.#stopHost(host);
        return;
      }
      case FrameKind.Spawn:
      case FrameKind.Stop:
        throw new TypeError('a host does not send this');
      default: {
        const unknown: never = frame;
        throw new TypeError(`unknown frame ${String((unknown as readonly unknown[])[0])}`);
      }
    }
  }

  #takeSpawn(id: number, from: number): PendingSpawn | undefined {
    const pending = this.#spawns.get(id);
    if (pending === undefined || pending.host.creation !== from) return undefined;
    this.#spawns.delete(id);
    pending.host.pendingSpawns--;
    return pending;
  }

  #hostExited(host: PlacedHost, exit: ShutdownWith, error: Error | undefined): void {
    if (this.placed.get(host.creation) !== host) return;
    this.placed.delete(host.creation);
    if (host.name !== undefined && this.#named.get(host.name) === host) this.#named.delete(host.name);
    // Stopped because idle: it had no actors, so what still pointed at one sees noproc.
    const reason: ExitReason =
      host.terminated !== undefined
        ? { shutdown: { ...(exit.shutdown as object), terminated: host.terminated } }
        : host.state === 'stopping' && isCleanHostExit(exit)
          ? 'noproc'
          : exit;
    this.#hostGone(host, reason, error);
    this.#broadcast([FrameKind.HostDown, host.creation, reason]);
  }

  /** Everything here that depended on `host` learns it is gone. */
  #hostGone(host: PlacedHost, reason: ExitReason, error: Error | undefined): void {
    for (const [id, pending] of this.#spawns) {
      if (pending.host !== host) continue;
      this.#spawns.delete(id);
      const failure = new PlacementFailed(reason, error === undefined ? 'the host exited' : `the host exited (${error.message})`);
      pending.reject(failure);
    }
    for (const [name, ref] of this.#remoteNames) if (ref.creation === host.creation) this.#remoteNames.delete(name);
    this.hostDown(host.creation, reason);
  }

  // ---- Router -------------------------------------------------------------------------------

  sendName(name: string, message: unknown): boolean {
    const ref = this.#remoteNames.get(name);
    if (ref === undefined) return false;
    this.send(ref, message);
    return true;
  }

  whereis(name: string): Ref | undefined {
    return this.#remoteNames.get(name);
  }

  registered(name: string, ref: Ref): void {
    this.#broadcast([FrameKind.NameAdd, name, ref]);
  }

  unregistered(name: string, ref: Ref): void {
    this.#broadcast([FrameKind.NameRemove, name, ref]);
  }

  /** The system shut down: every host is terminated, and what waited on one sees `shutdown`. */
  shutdown(): void {
    this.#stopped = true;
    const hosts = [...this.placed.values()];
    this.placed.clear();
    this.#named.clear();
    for (const host of hosts) {
      host.state = 'stopping';
      this.#hostGone(host, 'shutdown', undefined);
      host.channel.terminate();
    }
  }

  /** See `terminateHost`: killed now, not asked; what it sends from here on is ignored. */
  terminate(creation: number, detail: unknown): Promise<boolean> {
    const host = this.placed.get(creation);
    if (host === undefined) return Promise.resolve(false);
    if (host.terminated === undefined) {
      this.stats.hostsTerminated++;
      host.terminated = detail ?? 'terminated';
      host.cut = true;
      this.#stopHost(host, false);
      host.channel.terminate();
    }
    return host.exited.then(() => true);
  }

  // ---- introspection ------------------------------------------------------------------------

  hosts(): HostInfo[] {
    return [...this.placed.values()].map((host) => ({
      creation: host.creation,
      placement: host.placement,
      name: host.name,
      pid: host.channel.pid,
      threadId: host.channel.threadId,
      state: host.state,
    }));
  }

  allExited(): Promise<void> {
    return Promise.all([...this.#exits]).then(() => undefined);
  }
}

/** A host that exited by itself with code 0 (after the hub told it to stop). */
function isCleanHostExit(exit: ShutdownWith): boolean {
  const detail = exit.shutdown as { thread_exit?: number; process_exit?: number | null };
  return detail.thread_exit === 0 || detail.process_exit === 0;
}

/**
 * A node: an ActorSystem reachable from other nodes. It listens for peers, dials its seeds and the
 * nodes it is asked to connect to (keeping them connected, with capped backoff), authenticates
 * every link by the handshake, and installs each link's router in the kernel's route table under
 * the peer's name, so refs of that node are served by it. Refs of nodes not connected go to
 * Unreachable (noconnection).
 */
import { isIP, type AddressInfo, type Server, type Socket } from 'node:net';
import { exponentialBackoff } from '../actors/backoff.js';
import type { ClockTimer } from '../actors/clock.js';
import { ActorSystem } from '../actors/system.js';
import type { MoloError } from '../actors/errors.js';
import { Ref } from '../actors/ref.js';
import { Supervisor } from '../behaviours/supervisor.js';
import { RefTable } from '../actors/placement/ref-table.js';
import type { Logger } from '../telemetry/logger-api.js';
import { describeSocketError, HandshakeRefused, InvalidNodeOption, NodeDown, NodeFrameTooLarge, NodeStopped, type RefusalReason } from './errors.js';
import { NET_KERNEL_NAME, netKernelChild } from './net-kernel.js';
import { callByName } from './named-call.js';
import { LinkActors, nodeLinksChild } from './link-actors.js';
import { dial, listen } from './sockets.js';
import { NodeCounters, type NodeStats } from './stats.js';
import { accept, initiate, type HandshakeResult, type HandshakeSide } from './handshake.js';
import { NodeLink, type DownReason, type LinkSettings } from './link.js';
import { nodeMetrics } from './metrics.js';
import { parseNodeName } from './names.js';
import { resolveNodeOptions, systemOptionsFor, type NodeOptions, type ResolvedNodeOptions } from './options.js';
import { serveSpawn, spawnRequest, type RemoteSpawnOptions } from './remote-spawn.js';
import { Unreachable } from './unreachable.js';
import { PeerAttribution } from './peer-attribution.js';
import type { PendingSocket } from './accept-gate.js';
import { Acceptor } from './acceptor.js';
import { BusyRetry } from './busy-retry.js';
import { AutoConnect } from './auto-connect.js';
import type { PeerRouter } from './peer-router.js';
import type { BehaviourModule } from '../actors/placement/types.js';

export { NET_KERNEL_NAME } from './net-kernel.js';
export type { NodeStats } from './stats.js';
/** Default time a remote spawn may take (a process host starting, a module loading). */
export const REMOTE_SPAWN_TIMEOUT_MS = 30_000;

/** What an actor given to `monitorNodes` receives. */
export type NodeEventMessage =
  | { readonly type: 'nodeup'; readonly node: string }
  | { readonly type: 'nodedown'; readonly node: string; readonly reason: DownReason };

interface Wanted {
  attempts: number;
  timer: ClockTimer | undefined;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

type Listener = (node: string, reason: DownReason) => void;

/** Starts a node: listens, starts its system, connects to its seeds. */
export async function startNode(options: NodeOptions): Promise<Node> {
  const resolved = resolveNodeOptions(options);
  const server = await listen(resolved.listenHost, resolved.address.port, resolved.tls, resolved.handshakeTimeoutMs);
  const { name, host } = resolved.address;
  const port = resolved.address.port === 0 ? (server.address() as AddressInfo).port : resolved.address.port;
  const node = `${name}@${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const system = new ActorSystem(systemOptionsFor(node, resolved, options));
  const attribution = new PeerAttribution(system);
  let services: Ref;
  try {
    services = await Supervisor.start(system, {
      strategy: 'one_for_one',
      intensity: 10,
      periodMs: 10_000,
      children: [netKernelChild(system, resolved.remoteSpawn, attribution), nodeLinksChild(system)],
    }, { name: CLUSTER_SERVICES_NAME });
  } catch (error) {
    server.close();
    system.shutdown();
    throw error;
  }
  return new Node(node, system, server, resolved, options, services, attribution);
}

/**
 * A node's supervisor: its net kernel (`net_kernel`), the actors of its links (`node_links`), then
 * each cluster service (global names, process groups, topics, the bus, replication), a permanent
 * child started by the service itself; restarts are cheap (state lives in the service, peers call
 * the kernel by name). Stopped in reverse: services, links, kernel.
 */
export const CLUSTER_SERVICES_NAME = 'molo.cluster_sup';

export class Node {
  readonly #server: Server;
  readonly #options: ResolvedNodeOptions;
  readonly #settings: LinkSettings;
  readonly #side: HandshakeSide;
  readonly #links = new Map<string, NodeLink>();
  readonly #dialing = new Set<string>();
  readonly #wanted = new Map<string, Wanted>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #listeners = { nodeup: new Set<Listener>(), nodedown: new Set<Listener>() };
  readonly #unreachable: Unreachable;
  readonly #auto: AutoConnect;
  /** This node's canonical refs: another node in the same process never hands it a live object of its own. */
  readonly #refs = new RefTable();
  readonly #linkActors: LinkActors;
  /** Accepted sockets, counted from the TCP accept until their handshake ends. */
  readonly #acceptor: Acceptor;
  /** Peers that answered `busy`, dialled again soon. */
  readonly #busy: BusyRetry;
  #stopped = false;
  #closed: Promise<void> | undefined;
  readonly #counts = new NodeCounters();
  /** Typed errors logged per link before only counting: a hostile peer cannot flood the log. */
  static readonly LOGGED_DROPS_PER_LINK = 10;
  readonly #logged = new WeakMap<NodeLink, number>();

  /** @internal Use {@link startNode}. */
  constructor(
    readonly name: string,
    readonly system: ActorSystem,
    server: Server,
    options: ResolvedNodeOptions,
    raw: NodeOptions,
    /** @internal The node's supervisor (`molo.cluster_sup`); each cluster service starts its actor under it. */
    readonly services: Ref,
    /** @internal The net kernel and cluster services: what peers send them arrives attributed to the link (peer-attribution.ts). */
    readonly attribution: PeerAttribution,
  ) {
    this.#server = server;
    this.#options = options;
    this.#settings = {
      maxFrameBytes: options.maxFrameBytes,
      sendQueueBytes: options.sendQueueBytes,
      detectionMs: options.detectionMs,
      fullPolicy: options.fullPolicy,
    };
    this.#linkActors = new LinkActors(system, services, () => this.#stopped);
    this.#unreachable = new Unreachable(system, () => void this.stop());
    this.#auto = new AutoConnect(system, this.#unreachable, {
      enabled: options.autoConnect,
      pendingBytes: options.autoConnectPendingBytes,
      pendingCount: options.autoConnectPendingCount,
      maxPending: options.maxPendingAutoConnects,
      // The dial's own deadline, and a second more for a link coming up from the other side.
      attemptMs: options.handshakeTimeoutMs + 1_000,
      backoffMinMs: options.reconnectMinMs,
      backoffMaxMs: options.reconnectMaxMs,
      fullPolicy: options.fullPolicy,
      allow: options.allow,
    }, { name, dial: (node) => void this.#dial(node) }, this.#refs);
    system.setRemoteRouter(this.#auto);
    this.#side = {
      name,
      secret: options.secret,
      info: { creation: system.creation, maxFrameBytes: options.maxFrameBytes, sendQueueBytes: options.sendQueueBytes },
      admit: (peer) => this.#admit(peer),
    };
    this.#busy = new BusyRetry(options, (node) => void this.#dial(node), system.clock);
    this.#acceptor = new Acceptor(server, options, {
      stopped: () => this.#stopped,
      refused: (error) => this.#refused(error),
      handshake: (socket, entry, helloReceived) =>
        void this.#handshake(socket, Promise.resolve(), (side) => accept(socket, side, helloReceived), undefined, entry).catch(() => {
          // Refused and counted; the node carries on.
        }),
    });
    nodeMetrics(raw.registry)?.add(this);
    for (const seed of options.seeds) if (seed !== name) this.#want(seed);
  }

  get logger(): Logger {
    return this.system.logger;
  }

  // ---- the public API ------------------------------------------------------------------------

  /** Connected nodes, by name. */
  nodes(): string[] {
    return [...this.#links.keys()];
  }

  isConnected(node: string): boolean {
    return this.#links.has(node);
  }

  /**
   * Connects to `node` and keeps it connected (reconnecting with backoff until `disconnect`).
   * Resolves when the link is up; rejects with the first attempt's error (HandshakeRefused,
   * NodeDown), while attempts go on.
   */
  connect(node: string): Promise<void> {
    try {
      parseNodeName(node);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#stopped) return Promise.reject(new NodeStopped(this.name));
    if (node === this.name) return Promise.reject(new InvalidNodeOption('node', 'a node does not connect to itself'));
    if (this.#links.has(node)) return Promise.resolve();
    const promise = new Promise<void>((resolve, reject) => {
      let waiters = this.#waiters.get(node);
      if (waiters === undefined) this.#waiters.set(node, (waiters = new Set()));
      waiters.add({ resolve, reject });
    });
    this.#want(node);
    return promise;
  }

  /** Closes the link to `node` (its actors see `noconnection`) and stops reconnecting to it. */
  disconnect(node: string): void {
    const wanted = this.#wanted.get(node);
    if (wanted?.timer !== undefined) this.system.clock.clearTimer(wanted.timer);
    this.#wanted.delete(node);
    this.#links.get(node)?.close('disconnect');
  }

  /** The ref registered as `name` on `node` (this node included); undefined if none. Fails with NodeDown if not connected. */
  async whereis(name: string, node: string): Promise<Ref | undefined> {
    if (node === this.name) return this.system.whereis(name);
    const ref = await this.#callKernel(node, `name '${name}'`, ['whereis', name], this.system.callTimeoutMs);
    return ref instanceof Ref ? ref : undefined;
  }

  /**
   * Spawns a behaviour module on `node` (this one included), on its loop, in a thread or in a
   * process, or as a child of a supervisor registered there; resolves with the ref once its init
   * succeeded (undefined if a supervisor's child answered ignore). That node must allow the module
   * (`remoteSpawn`); its failures arrive as the errors they were there (PlacementFailed, …).
   */
  async spawn(node: string, module: BehaviourModule, options: RemoteSpawnOptions = {}, timeoutMs = REMOTE_SPAWN_TIMEOUT_MS): Promise<Ref | undefined> {
    const request = spawnRequest(module, options);
    if (node === this.name) return serveSpawn(this.system, true, request);
    const answer = await this.#callKernel(node, String(module.moduleUrl), request, timeoutMs);
    if (!Array.isArray(answer)) throw new TypeError('malformed spawn answer');
    if (answer[0] === 'ok') return answer[1] instanceof Ref ? answer[1] : undefined;
    throw answer[1] instanceof Error ? answer[1] : new Error(String(answer[1]));
  }

  /** Calls the net kernel of a connected node by name: a kernel restarted there answers too. */
  #callKernel(node: string, what: string, request: unknown, timeoutMs: number): Promise<unknown> {
    const link = this.#links.get(node);
    if (link === undefined) return Promise.reject(new NodeDown(node, what));
    return callByName(this.system, node, NET_KERNEL_NAME, request, timeoutMs, {
      sendNamed: (message) => link.router.sendNamed(NET_KERNEL_NAME, message),
      onDown: (listener) => this.on('nodedown', (down) => down === node && listener()),
    });
  }

  /** Sends to the actor registered as `name` on `node` (Erlang's `{Name, Node} ! Msg`); dropped if there is none. */
  sendNamed(name: string, node: string, message: unknown): void {
    if (node === this.name) {
      this.system.send(name, message);
      return;
    }
    const link = this.#links.get(node);
    if (link !== undefined) link.router.sendNamed(name, message);
    else if (!this.#auto.sendNamed(node, name, message, (router) => (router as PeerRouter).sendNamed(name, message))) this.#unreachable.dropped++;
  }

  /** Calls the actor registered as `name` on `node`: a `whereis` there, then the call (NoProc if none). */
  async callNamed<Reply = unknown>(name: string, node: string, request: unknown, timeoutMs?: number): Promise<Reply> {
    const ref = await this.whereis(name, node);
    return this.system.call<Reply>(ref ?? name, request, timeoutMs);
  }

  on(event: 'nodeup', listener: (node: string) => void): () => void;
  on(event: 'nodedown', listener: (node: string, reason: DownReason) => void): () => void;
  on(event: 'nodeup' | 'nodedown', listener: ((node: string) => void) | Listener): () => void {
    const set = this.#listeners[event];
    set.add(listener as Listener);
    return () => set.delete(listener as Listener);
  }

  /** Tells the actor `ref` of every node going up or down (NodeEventMessage), until the returned function is called. */
  monitorNodes(ref: Ref): () => void {
    const up = this.on('nodeup', (node) => this.system.send(ref, { type: 'nodeup', node } satisfies NodeEventMessage));
    const down = this.on('nodedown', (node, reason) => this.system.send(ref, { type: 'nodedown', node, reason } satisfies NodeEventMessage));
    return () => {
      up();
      down();
    };
  }

  /** Counters since start (links closed included). */
  stats(): NodeStats {
    return this.#counts.snapshot(this.#links.values(), this.#links.size, this.#unreachable.dropped, this.#auto.stats());
  }

  /** Per link: peer, bytes queued (unacknowledged or waiting), when it came up. */
  links(): { node: string; queuedBytes: number; upAt: number }[] {
    return [...this.#links.values()].map((link) => ({ node: link.peer, queuedBytes: link.queuedBytes, upAt: link.upAt }));
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Stops the node: its system shuts down (peers see its actors exit), then every link closes and
   * the listener stops. Resolves once the listener is closed.
   */
  stop(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    this.#stopped = true;
    let closed!: () => void;
    // Set first: the system's shutdown below calls back here (through the remote router).
    this.#closed = new Promise<void>((resolve) => (closed = resolve));
    for (const wanted of this.#wanted.values()) if (wanted.timer !== undefined) this.system.clock.clearTimer(wanted.timer);
    this.#wanted.clear();
    this.#busy.stop();
    this.#acceptor.close();
    for (const [node, waiters] of this.#waiters) for (const waiter of waiters) waiter.reject(new NodeDown(node, undefined));
    this.#waiters.clear();
    this.#auto.stop();
    if (!this.system.stopped) this.system.shutdown();
    // A turn later, so the exits the shutdown sent are written before the links close.
    setImmediate(() => {
      for (const link of [...this.#links.values()]) link.close('stopped');
      this.#server.close(() => closed());
    });
    return this.#closed;
  }

  // ---- links ----------------------------------------------------------------------------------

  /** Acceptor's rule for a peer: known (if `allow` is set), not already linked; a simultaneous dial is won by the smaller name. */
  #admit(peer: string): RefusalReason | undefined {
    if (this.#stopped) return 'busy';
    if (this.#options.allow !== undefined && !this.#options.allow.has(peer)) return 'unknown';
    if (this.#links.has(peer)) return 'duplicate';
    if (this.#dialing.has(peer) && this.name < peer) return 'duplicate';
    return undefined;
  }

  #want(node: string): void {
    if (!this.#wanted.has(node)) this.#wanted.set(node, { attempts: 0, timer: undefined });
    void this.#dial(node);
  }

  #scheduleReconnect(node: string): void {
    const wanted = this.#wanted.get(node);
    if (wanted === undefined || this.#stopped || wanted.timer !== undefined || this.#links.has(node)) return;
    const { reconnectMinMs, reconnectMaxMs } = this.#options;
    // Jittered, so nodes that lost each other do not redial in lockstep; never past the cap.
    const delay = Math.min(reconnectMaxMs, exponentialBackoff({ baseMs: reconnectMinMs, capMs: reconnectMaxMs, jitter: [0.75, 1.25] }, wanted.attempts));
    wanted.attempts++;
    wanted.timer = this.system.clock.setTimer(() => {
      wanted.timer = undefined;
      void this.#dial(node);
    }, delay);
    this.system.clock.unrefTimer?.(wanted.timer);
  }

  async #dial(node: string): Promise<void> {
    if (this.#stopped || this.#links.has(node) || this.#dialing.has(node)) return;
    this.#dialing.add(node);
    const { host, port } = parseNodeName(node);
    const { socket, connected } = dial(host, port, this.#options.tls);
    try {
      await this.#handshake(socket, connected, (side) => initiate(socket, side, node), node);
    } catch (error) {
      this.#dialing.delete(node);
      if (error instanceof HandshakeRefused && error.reason === 'busy' && !this.#stopped && this.#busy.retry(node)) return;
      this.#busy.forget(node);
      // Refused as a duplicate: the link is up, or coming up, from the other side; waiters wait for it.
      if (!(error instanceof HandshakeRefused && error.reason === 'duplicate')) {
        for (const waiter of this.#waiters.get(node) ?? []) waiter.reject(error);
        this.#waiters.delete(node);
        // A NodeDown of the dial is unwrapped: the calls that waited get NodeDowns of their own, caused by the socket's error.
        this.#auto.failed(node, error instanceof NodeDown && error.cause !== undefined ? error.cause : error);
      }
      this.#scheduleReconnect(node);
    } finally {
      this.#dialing.delete(node);
    }
  }

  async #handshake(
    socket: Socket,
    connected: Promise<void>,
    run: (side: HandshakeSide) => Promise<HandshakeResult>,
    expected: string | undefined,
    entry?: PendingSocket,
  ): Promise<void> {
    let timedOut = false;
    // The deadline covers connecting too.
    const timer = this.system.clock.setTimer(() => {
      timedOut = true;
      socket.destroy();
    }, this.#options.handshakeTimeoutMs);
    const swallow = (): void => {};
    socket.on('error', swallow);
    try {
      let result: HandshakeResult;
      try {
        await connected;
        result = await run(this.#side);
      } catch (error) {
        const closed = entry === undefined ? undefined : this.#acceptor.closedBy(entry);
        if (closed !== undefined) throw closed;
        if (timedOut) throw new HandshakeRefused('timeout', expected, `not finished within ${this.#options.handshakeTimeoutMs} ms (handshakeTimeoutMs)`);
        if (error instanceof HandshakeRefused) throw error;
        const tlsFailure = this.#options.tls !== undefined && /certificate|SSL|TLS|self.signed/i.test(String((error as Error)?.message));
        if (tlsFailure) throw new HandshakeRefused('tls', expected, describeSocketError(error as Error), { cause: error });
        throw new NodeDown(expected ?? 'an unnamed peer', undefined, { cause: error ?? new Error('connection closed during the handshake') });
      }
      if (this.#stopped) throw new NodeStopped(this.name);
      if (this.#links.has(result.peer)) throw new HandshakeRefused('duplicate', result.peer, 'already linked');
      socket.off('error', swallow);
      this.#up(socket, result);
    } catch (error) {
      socket.destroy();
      if (error instanceof HandshakeRefused && entry?.closedBy === undefined) this.#refused(error);
      throw error;
    } finally {
      this.system.clock.clearTimer(timer);
      if (entry !== undefined) this.#acceptor.release(entry);
    }
  }

  #refused(error: HandshakeRefused): void {
    this.#counts.refused(error.reason);
    // A duplicate is the normal end of a simultaneous connect; evictions are what a flood costs it (counted, not logged).
    if (error.reason !== 'duplicate' && error.reason !== 'evicted') this.logger.warn({ err: error, node: this.name }, 'nodes.handshake_refused');
  }

  #up(socket: Socket, result: HandshakeResult): void {
    const { peer } = result;
    const link = new NodeLink(socket, peer, result.info, this.system, this.#settings, {
      dropped: (from, error) => this.#dropped(from, error),
      down: (from, reason) => this.#down(from, reason),
    }, this.#refs, this.attribution);
    this.#links.set(peer, link);
    this.system.setNodeRoute(peer, link.router);
    // Traffic held while connecting goes first, before anything routed anew can pass it.
    this.#auto.up(peer, link.router);
    this.#counts.handshakesCompleted++;
    const wanted = this.#wanted.get(peer);
    if (wanted !== undefined) wanted.attempts = 0;
    this.#busy.forget(peer);
    link.start(result.leftover);
    this.#linkActors.attach(link);
    this.logger.info({ node: this.name, peer }, 'nodes.up');
    for (const waiter of this.#waiters.get(peer) ?? []) waiter.resolve();
    this.#waiters.delete(peer);
    this.#emit('nodeup', peer);
  }

  #dropped(link: NodeLink, error: MoloError): void {
    if (error instanceof NodeFrameTooLarge) this.#counts.framesTooLarge++;
    const logged = this.#logged.get(link) ?? 0;
    if (logged >= Node.LOGGED_DROPS_PER_LINK) return;
    this.#logged.set(link, logged + 1);
    this.logger.warn({ err: error, node: this.name, peer: link.peer }, 'nodes.frame_dropped');
  }

  #down(link: NodeLink, reason: DownReason): void {
    const peer = link.peer;
    this.#counts.closed(link);
    this.#linkActors.detach(link);
    if (this.#links.get(peer) !== link) return;
    this.#links.delete(peer);
    this.system.setNodeRoute(peer, undefined);
    this.logger.info({ node: this.name, peer, reason }, 'nodes.down');
    this.#emit('nodedown', peer, reason);
    this.#scheduleReconnect(peer);
  }

  #emit(event: 'nodeup' | 'nodedown', node: string, reason: DownReason = 'closed'): void {
    for (const listener of [...this.#listeners[event]]) {
      try {
        listener(node, reason);
      } catch (error) {
        this.logger.error({ err: error, node: this.name }, `a ${event} listener threw`);
      }
    }
  }
}

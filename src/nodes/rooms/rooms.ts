/**
 * `startRooms`: one instance's rooms under a supervisor of their own (visible in the admin tree):
 * the socket server, the direct-message bridge and a dynamic supervisor of room bridges. Answers
 * the server-side API: broadcast to a room (optionally all but one socket), send to one socket,
 * presence, status.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { GenServer, Supervisor, worker, type ChildSpec } from '../../behaviours/index.js';
import type { BusItem } from '../bus/index.js';
import { RoomsHub } from './hub.js';
import { roomsMetrics } from './metrics.js';
import { resolveRooms, type RoomsOptions } from './options.js';
import type { PresenceEntry } from './presence.js';
import { DirectBridge, RoomBridge } from './room-bridge.js';
import { RoomSocketServer, type RoomsDetail, type RoomsStatus } from './socket-server.js';

export interface Rooms {
  readonly instance: string;
  readonly port: number;
  readonly supervisor: Ref;
  /** The registered name of the dynamic supervisor of this instance's room bridges. */
  readonly bridgeSupervisor: string;
  broadcast(room: string, data: unknown, options?: { readonly except?: string }): Promise<number>;
  sendTo(socket: string, data: unknown): Promise<void>;
  presence(room: string): Promise<PresenceEntry[]>;
  status(): Promise<RoomsStatus>;
  /** The status with the largest rooms and the slowest sockets (what the admin tree's `sections.rooms` shows). */
  detail(): Promise<RoomsDetail>;
  stop(): Promise<void>;
}

/** How startRooms starts its supervisor: `link` to a parent (a supervisor's child start, see roomsChild). */
export interface RoomsStartOptions {
  readonly link?: Ref;
}

let started = 0;

export async function startRooms(system: ActorRuntime, options: RoomsOptions, start: RoomsStartOptions = {}): Promise<Rooms> {
  const config = resolveRooms(options);
  const hub = new RoomsHub(config);
  const metrics = roomsMetrics(options.metrics);
  const tag = `rooms.${config.instance}.${++started}`;
  const bridges = `${tag}.bridges`;
  const server = `${tag}.server`;
  let port = 0;
  hub.startBridge = async (room: string, topic: string, deliver: (item: BusItem) => void) => {
    await Supervisor.startChild(system, bridges, [room, topic, deliver]);
    // The bridge's current ref: after a restart it is not the one started here.
    return () => {
      const ref = hub.bridges.get(deliver);
      if (ref !== undefined) Supervisor.terminateChild(system, bridges, ref).catch(() => undefined);
    };
  };
  metrics?.add(hub);
  const supervisor = await Supervisor.start(system, {
    strategy: 'one_for_all',
    children: [
      {
        id: 'bridges',
        type: 'supervisor',
        start: ({ system: sys, parent }) =>
          Supervisor.start(
            sys,
            {
              strategy: 'simple_one_for_one',
              maxChildren: 100_000,
              children: [worker('bridge', (room: string, topic: string, deliver: (item: BusItem) => void) => new RoomBridge(hub, room, topic, deliver), { restart: 'transient', server: { trapExit: true } })],
            },
            { link: parent, name: bridges },
          ),
      },
      worker('direct', () => new DirectBridge(hub), { server: { trapExit: true } }),
      worker('server', () => new RoomSocketServer(hub, (p) => (port = p)), { server: { name: server, trapExit: true } }),
    ],
  }, start.link === undefined ? {} : { link: start.link });
  return {
    instance: config.instance,
    get port() {
      return port;
    },
    supervisor,
    bridgeSupervisor: bridges,
    broadcast: (room, data, opts) => hub.broadcast(room, data, opts),
    sendTo: (socket, data) => hub.sendTo(socket, data),
    presence: async (room) => (config.presence === undefined ? [] : config.presence.list(room)),
    status: () => GenServer.call<RoomSocketServer>(system, server, 'status') as Promise<RoomsStatus>,
    detail: () => GenServer.call<RoomSocketServer>(system, server, 'detail') as Promise<RoomsDetail>,
    stop: async () => {
      metrics?.remove(hub);
      await Supervisor.stop(system, supervisor);
    },
  };
}

/**
 * The rooms of this instance as a supervisor's child (a node's root, say), so that they are in the
 * admin tree and the observer's rooms panel: `current` is the running instance's handle (a new
 * one after a restart; undefined before the first start).
 */
export function roomsChild(id: string, options: RoomsOptions): ChildSpec & { readonly current: Rooms | undefined } {
  let current: Rooms | undefined;
  const spec: ChildSpec = {
    id,
    type: 'supervisor',
    start: async ({ system, parent }) => {
      current = await startRooms(system, options, { link: parent });
      return current.supervisor;
    },
  };
  // Not enumerable: it rides along for the caller, it is not a child-spec key (those are checked).
  return Object.defineProperty(spec, 'current', { get: () => current, enumerable: false }) as ChildSpec & { readonly current: Rooms | undefined };
}

/**
 * The admin tree's view of a rooms instance (the shape of the admin layer's `SnapshotProvider`,
 * which this layer may not import): its socket server answers its status, its largest rooms and
 * its slowest sockets, in `sections.rooms`. Part of every application node's snapshot. Named by the
 * behaviour's name, not by importing the server: the admin layer loads this without `ws`.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { GenServer } from '../../behaviours/index.js';

/** The socket server's behaviour name (RoomSocketServer.name; the rooms test holds them equal). */
export const ROOM_SOCKET_SERVER_BEHAVIOUR = 'RoomSocketServer';

export function roomsProviders(): { readonly behaviour: string; readonly section: string; describe(system: ActorRuntime, ref: Ref): Promise<unknown>; readonly descend: boolean }[] {
  return [{ behaviour: ROOM_SOCKET_SERVER_BEHAVIOUR, section: 'rooms', describe: (system, ref) => GenServer.call(system, ref, 'detail'), descend: false }];
}

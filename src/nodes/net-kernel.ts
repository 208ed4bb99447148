/**
 * Each node's net kernel: an actor registered as `molo.net_kernel` whose ref peers learn in the
 * handshake. It answers `['whereis', name]` and remote spawns (`['spawn', …]`, see
 * remote-spawn.ts); a spawn is answered when it settles, so the kernel keeps serving meanwhile.
 */
import type { ActorSystem } from '../actors/system.js';
import { CallRequest, type Envelope } from '../actors/index.js';
import type { Ref } from '../actors/ref.js';
import { serveSpawn, type RemoteSpawnPolicy } from './remote-spawn.js';

export const NET_KERNEL_NAME = 'molo.net_kernel';

export function startNetKernel(system: ActorSystem, remoteSpawn: RemoteSpawnPolicy): Ref {
  return system.spawn(
    (message: Envelope<unknown>) => {
      if (!(message instanceof CallRequest)) return;
      const request = message.request;
      if (Array.isArray(request) && request[0] === 'whereis' && typeof request[1] === 'string') {
        message.reply(system.whereis(request[1]) ?? null);
      } else if (Array.isArray(request) && request[0] === 'spawn' && request.length === 5) {
        serveSpawn(system, remoteSpawn, request).then(
          (ref) => message.reply(['ok', ref ?? null]),
          (error: unknown) => message.reply(['error', error instanceof Error ? error : new Error(String(error))]),
        );
      } else {
        message.reply(null);
      }
    },
    { name: NET_KERNEL_NAME },
  );
}

/**
 * Each node's net kernel: an actor registered as `molo.net_kernel`, a permanent child of the
 * node's supervisor (`molo.cluster_sup`), that peers call by name (named-call.ts), as OTP's
 * `{net_kernel, Node}`: killed, it is started again under its name and serves the next call. It
 * answers `['whereis', name]` and remote spawns (`['spawn', …]`, see remote-spawn.ts); a spawn is
 * answered when it settles, so the kernel keeps serving meanwhile.
 */
import type { ActorSystem } from '../actors/system.js';
import { CallRequest } from '../actors/index.js';
import type { ChildSpec } from '../behaviours/child-spec.js';
import { openNamedCall } from './named-call.js';
import { FromPeer, type PeerAttribution } from './peer-attribution.js';
import { serveSpawn, type RemoteSpawnPolicy } from './remote-spawn.js';

export const NET_KERNEL_NAME = 'molo.net_kernel';

export function netKernelChild(system: ActorSystem, remoteSpawn: RemoteSpawnPolicy, attribution: PeerAttribution): ChildSpec {
  let unattribute: (() => void) | undefined;
  return {
    id: 'net_kernel',
    restart: 'permanent',
    start: ({ parent }) => {
      unattribute?.();
      const ref = system.spawn((message: unknown) => {
        if (message instanceof FromPeer) {
          const call = openNamedCall(message);
          if (call !== undefined) answer(serve(system, remoteSpawn, call.request), (value) => call.answer(system, value));
        } else if (message instanceof CallRequest && !(message.request instanceof FromPeer)) {
          answer(serve(system, remoteSpawn, message.request), (value) => message.reply(value));
        }
      }, { name: NET_KERNEL_NAME, link: parent });
      // Peers' calls arrive with the link they came on, so each answer goes back to its own caller.
      unattribute = attribution.add(ref);
      return ref;
    },
  };
}

function serve(system: ActorSystem, remoteSpawn: RemoteSpawnPolicy, request: unknown): unknown {
  if (Array.isArray(request) && request[0] === 'whereis' && typeof request[1] === 'string') return system.whereis(request[1]) ?? null;
  if (Array.isArray(request) && request[0] === 'spawn' && request.length === 5) {
    return serveSpawn(system, remoteSpawn, request).then(
      (ref) => ['ok', ref ?? null],
      (error: unknown) => ['error', error instanceof Error ? error : new Error(String(error))],
    );
  }
  return null;
}

function answer(value: unknown, reply: (value: unknown) => void): void {
  if (value instanceof Promise) void value.then(reply);
  else reply(value);
}

/**
 * Error registry of the nodes layer (transport and distributed actors). Stable codes, never reused;
 * every code starts with `NODE_` and has a row in docs/errors.md.
 */
import { codedError, optionError } from '../actors/coded-error.js';

export const NodeErrorCode = {
  InvalidName: 'NODE_INVALID_NAME',
  InvalidOption: 'NODE_INVALID_OPTION',
  HandshakeRefused: 'NODE_HANDSHAKE_REFUSED',
  FrameTooLarge: 'NODE_FRAME_TOO_LARGE',
  MalformedFrame: 'NODE_MALFORMED_FRAME',
  UnknownActor: 'NODE_UNKNOWN_ACTOR',
  LinkFull: 'NODE_LINK_FULL',
  NodeDown: 'NODE_DOWN',
  NodeStopped: 'NODE_STOPPED',
  AutoConnectLimit: 'NODE_AUTO_CONNECT_LIMIT',
  SpawnRefused: 'NODE_SPAWN_REFUSED',
} as const;
export type NodeErrorCode = (typeof NodeErrorCode)[keyof typeof NodeErrorCode];

/** Not a node name of the form `name@host:port` (name and host of safe characters, port 1..65535). */
export class InvalidNodeName extends codedError(NodeErrorCode.InvalidName, (value: unknown, detail: string) => ({
  message: `invalid node name ${JSON.stringify(String(value)).slice(0, 300)}: ${detail}`,
  fields: { value },
})) {}

/** An option of `startNode` is missing or outside its range; `option` names the setting (and so the cap). */
export class InvalidNodeOption extends optionError(NodeErrorCode.InvalidOption, 'node option') {}

/** Why a handshake was refused; each reason is counted (`molo_node_handshakes_refused_total{reason}`). */
export type RefusalReason =
  | 'malformed'
  | 'version'
  | 'bad_name'
  | 'unknown'
  | 'same_name'
  | 'duplicate'
  | 'auth'
  | 'timeout'
  | 'busy'
  | 'evicted'
  | 'wrong_node'
  | 'tls';

/** A peer was refused (or refused us) before any actor traffic: the connection is closed. */
export class HandshakeRefused extends codedError(NodeErrorCode.HandshakeRefused, (reason: RefusalReason, peer: string | undefined, detail: string, options?: { cause?: unknown }) => ({
  // `cause`: the TLS library's error when reason is tls (its code is in the detail too).
  message: `handshake with ${peer ?? 'an unnamed peer'} refused (${reason}): ${detail}`,
  fields: { reason, peer },
  ...(options === undefined ? {} : { options }),
})) {}

/** A peer sent a frame over the frame cap: the link is closed before the frame is buffered. */
export class NodeFrameTooLarge extends codedError(NodeErrorCode.FrameTooLarge, (peer: string, detail: string) => ({
  message: `frame from ${peer} over the cap (maxFrameBytes): ${detail}`,
  fields: { peer },
})) {}

/** A frame from a peer could not be decoded, had the wrong shape, or spoke for actors not its own: dropped. */
export class MalformedNodeFrame extends codedError(NodeErrorCode.MalformedFrame, (peer: string, detail: string) => ({
  message: `frame from ${peer} dropped: ${detail}`,
  fields: { peer },
})) {}

/** A peer addressed a message to an actor this node does not have: dropped (as a send to a dead ref). */
export class UnknownRemoteActor extends codedError(NodeErrorCode.UnknownActor, (peer: string, target: string) => ({
  message: `message from ${peer} for ${target}, which is not alive here: dropped`,
  fields: { peer, target },
})) {}

/** The link's send queue is at its cap (`sendQueueBytes`): a call fails at once, a send follows the full policy. */
export class NodeLinkFull extends codedError(NodeErrorCode.LinkFull, (node: string, queueBytes: number) => ({
  message: `send queue to ${node} is full (sendQueueBytes = ${queueBytes})`,
  fields: { node, queueBytes },
})) {}

/** The callee's node is not connected, or its link dropped while the call waited. */
export class NodeDown extends codedError(NodeErrorCode.NodeDown, (node: string, target: string | undefined, options?: { cause?: unknown }) => ({
  // `cause`: why a connect failed (ECONNREFUSED, ENOTFOUND, a closed socket), when one did.
  message: `node ${node} is not connected (noconnection)${target === undefined ? '' : `: ${target}`}${describeCause(options?.cause)}`,
  fields: { node, target },
  options,
})) {}

/** The local node was stopped: nothing more is sent or accepted. */
export class NodeStopped extends codedError(NodeErrorCode.NodeStopped, (node: string) => ({
  message: `node ${node} is stopped`,
  fields: { node },
})) {}

/** A call to a node not connected, while `maxPendingAutoConnects` auto-connect attempts are in progress: refused at once. */
export class NodeAutoConnectLimit extends codedError(NodeErrorCode.AutoConnectLimit, (node: string, limit: number) => ({
  message: `node ${node} is not connected and ${limit} auto-connects are in progress (maxPendingAutoConnects)`,
  fields: { node, limit },
})) {}

/** Why a remote spawn was refused: `remoteSpawn` is off, or the module is not a file inside an allowed directory. */
export type SpawnRefusal = 'disabled' | 'not_file' | 'encoded_separator' | 'not_found' | 'outside';

/** A peer asked this node to spawn a module its `remoteSpawn` does not allow: nothing was imported. */
export class RemoteSpawnRefused extends codedError(NodeErrorCode.SpawnRefused, (reason: SpawnRefusal, module: string, detail: string) => ({
  message: `remote spawn of ${JSON.stringify(module.slice(0, 300))} refused (${reason}): ${detail}`,
  fields: { reason, module },
})) {}

/** `; <code>: <message>` of a socket error, so the first line already says why. */
function describeCause(cause: unknown): string {
  return cause instanceof Error ? `; ${describeSocketError(cause)}` : '';
}

/** `<code>: <message>` of a socket or TLS error (the code once, if the message lacks it). */
export function describeSocketError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return `${code === undefined || error.message.includes(code) ? '' : `${code}: `}${error.message}`;
}

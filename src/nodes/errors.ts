/**
 * Error registry of the nodes layer (transport and distributed actors). Stable codes, never reused;
 * every code starts with `NODE_` and has a row in docs/errors.md.
 */
import { MoloError } from '../actors/errors.js';

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
export class InvalidNodeName extends MoloError {
  static readonly code = NodeErrorCode.InvalidName;
  constructor(
    readonly value: unknown,
    detail: string,
  ) {
    super(NodeErrorCode.InvalidName, `invalid node name ${JSON.stringify(String(value)).slice(0, 300)}: ${detail}`);
  }
}

/** An option of `startNode` is missing or outside its range; `option` names the setting (and so the cap). */
export class InvalidNodeOption extends MoloError {
  static readonly code = NodeErrorCode.InvalidOption;
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(NodeErrorCode.InvalidOption, `invalid node option ${option}: ${detail}`);
  }
}

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
export class HandshakeRefused extends MoloError {
  static readonly code = NodeErrorCode.HandshakeRefused;
  constructor(
    readonly reason: RefusalReason,
    readonly peer: string | undefined,
    detail: string,
  ) {
    super(NodeErrorCode.HandshakeRefused, `handshake with ${peer ?? 'an unnamed peer'} refused (${reason}): ${detail}`);
  }
}

/** A peer sent a frame over the frame cap: the link is closed before the frame is buffered. */
export class NodeFrameTooLarge extends MoloError {
  static readonly code = NodeErrorCode.FrameTooLarge;
  constructor(
    readonly peer: string,
    detail: string,
  ) {
    super(NodeErrorCode.FrameTooLarge, `frame from ${peer} over the cap (maxFrameBytes): ${detail}`);
  }
}

/** A frame from a peer could not be decoded, had the wrong shape, or spoke for actors not its own: dropped. */
export class MalformedNodeFrame extends MoloError {
  static readonly code = NodeErrorCode.MalformedFrame;
  constructor(
    readonly peer: string,
    detail: string,
  ) {
    super(NodeErrorCode.MalformedFrame, `frame from ${peer} dropped: ${detail}`);
  }
}

/** A peer addressed a message to an actor this node does not have: dropped (as a send to a dead ref). */
export class UnknownRemoteActor extends MoloError {
  static readonly code = NodeErrorCode.UnknownActor;
  constructor(
    readonly peer: string,
    readonly target: string,
  ) {
    super(NodeErrorCode.UnknownActor, `message from ${peer} for ${target}, which is not alive here: dropped`);
  }
}

/** The link's send queue is at its cap (`sendQueueBytes`): a call fails at once, a send follows the full policy. */
export class NodeLinkFull extends MoloError {
  static readonly code = NodeErrorCode.LinkFull;
  constructor(
    readonly node: string,
    readonly queueBytes: number,
  ) {
    super(NodeErrorCode.LinkFull, `send queue to ${node} is full (sendQueueBytes = ${queueBytes})`);
  }
}

/** The callee's node is not connected, or its link dropped while the call waited. */
export class NodeDown extends MoloError {
  static readonly code = NodeErrorCode.NodeDown;
  constructor(
    readonly node: string,
    readonly target: string | undefined,
    /** Why a connect failed (ECONNREFUSED, ENOTFOUND, a closed socket), when one did. */
    options?: { cause?: unknown },
  ) {
    super(NodeErrorCode.NodeDown, `node ${node} is not connected (noconnection)${target === undefined ? '' : `: ${target}`}${describeCause(options?.cause)}`, options);
  }
}

/** The local node was stopped: nothing more is sent or accepted. */
export class NodeStopped extends MoloError {
  static readonly code = NodeErrorCode.NodeStopped;
  constructor(readonly node: string) {
    super(NodeErrorCode.NodeStopped, `node ${node} is stopped`);
  }
}

/** A call to a node not connected, while `maxPendingAutoConnects` auto-connect attempts are in progress: refused at once. */
export class NodeAutoConnectLimit extends MoloError {
  static readonly code = NodeErrorCode.AutoConnectLimit;
  constructor(
    readonly node: string,
    readonly limit: number,
  ) {
    super(NodeErrorCode.AutoConnectLimit, `node ${node} is not connected and ${limit} auto-connects are in progress (maxPendingAutoConnects)`);
  }
}

/** Why a remote spawn was refused: `remoteSpawn` is off, or the module is not a file inside an allowed directory. */
export type SpawnRefusal = 'disabled' | 'not_file' | 'encoded_separator' | 'not_found' | 'outside';

/** A peer asked this node to spawn a module its `remoteSpawn` does not allow: nothing was imported. */
export class RemoteSpawnRefused extends MoloError {
  static readonly code = NodeErrorCode.SpawnRefused;
  constructor(
    readonly reason: SpawnRefusal,
    readonly module: string,
    detail: string,
  ) {
    super(NodeErrorCode.SpawnRefused, `remote spawn of ${JSON.stringify(module.slice(0, 300))} refused (${reason}): ${detail}`);
  }
}

/** `; <code>: <message>` of a socket error, so the first line already says why. */
function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return '';
  const code = (cause as NodeJS.ErrnoException).code;
  return `; ${code === undefined || cause.message.includes(code) ? '' : `${code}: `}${cause.message}`;
}

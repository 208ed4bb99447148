/** The options of `startNode`, with their defaults and caps. */
import type { ActorSystemOptions } from '../actors/system-options.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, MAX_PAYLOAD_LIMIT_BYTES } from '../actors/placement/limits.js';
import { unknownOptionKey } from '../actors/option-keys.js';
import type { Registry } from 'prom-client';
import { InvalidNodeOption } from './errors.js';
import { parseNodeName, type NodeAddress } from './names.js';
import type { RemoteSpawnPolicy } from './remote-spawn.js';
import { spawnDirectories } from './spawn-allow-list.js';

/** What happens to a send when a link's queue is full: it is dropped (counted), or the link is closed. */
export type FullPolicy = 'drop-newest' | 'disconnect';

export interface NodeTlsOptions {
  /** PEM key and certificate of this node (presented both as server and as client). */
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
  /** PEM certificate(s) of the authority that signs every node's certificate; peers are verified against it. */
  readonly ca: string | Buffer | readonly (string | Buffer)[];
}

export interface NodeOptions {
  /** `name@host:port`; port 0 takes a free port (the node's name then carries the real one). */
  readonly name: string;
  /** The cluster secret (at least 16 bytes); it never travels: each side proves it by HMAC. */
  readonly secret: string | Buffer;
  /** Nodes to connect to at start and to keep connected (reconnecting with capped backoff). */
  readonly seeds?: readonly string[];
  /** If given, only these nodes may connect to this one; others are refused (`unknown`). */
  readonly allow?: readonly string[];
  /** Address to listen on; default: the host of `name`. */
  readonly listenHost?: string;
  readonly tls?: NodeTlsOptions;
  /** A handshake not finished by then is closed; default 5 s, 50 ms..60 s. */
  readonly handshakeTimeoutMs?: number;
  /**
   * Accepted connections counted until their handshake ends (from the TCP accept, before TLS); at the
   * cap a newcomer evicts the oldest one that has not sent a complete hello, or is refused (`busy`)
   * if every one has; default 64, 1..4096.
   */
  readonly maxPendingHandshakes?: number;
  /** The same, per remote address; default 8 (at most maxPendingHandshakes), 1..4096. */
  readonly maxPendingHandshakesPerAddress?: number;
  /** An accepted connection without a complete hello by then is closed; default 2 s (at most handshakeTimeoutMs), 50 ms..60 s. */
  readonly helloDeadlineMs?: number;
  /** A peer silent for this long is down (heartbeats go out every quarter of it); default 10 s, 200 ms..10 min. */
  readonly detectionMs?: number;
  /** Reconnect backoff: first delay and cap; defaults 100 ms and 5 s, each 10 ms..10 min. */
  readonly reconnectMinMs?: number;
  readonly reconnectMaxMs?: number;
  /** Cap on one frame (a message, call, reply or signal); default 1 MiB, at most 64 MiB. */
  readonly maxFrameBytes?: number;
  /** Bytes a link may have queued and unacknowledged; default 4 MiB, at least twice a frame, at most 1 GiB. */
  readonly sendQueueBytes?: number;
  /** What a full send queue does to a send (a call always fails at once with NodeLinkFull); default `drop-newest`. */
  readonly fullPolicy?: FullPolicy;
  /**
   * Which behaviour modules this node spawns when a peer asks (`node.spawn`): `false` (default),
   * `true` (any), or a list of directories (`file:` URLs or absolute paths, at most 64): a module is
   * spawned when its real path (`..` resolved, symlinks followed) lies inside one of them.
   */
  readonly remoteSpawn?: RemoteSpawnPolicy;
  /**
   * Connect on first use, as Erlang does: a send, call, monitor, link or exit to a node not connected
   * starts one attempt and is held until the node is up (then delivered in order) or the attempt
   * fails (then it fails as for an unreachable node). `false`: such traffic fails at once. Default true.
   */
  readonly autoConnect?: boolean;
  /** Bytes of sends and calls held for one node being auto-connected; default 1 MiB, from maxFrameBytes + 16 to sendQueueBytes. */
  readonly autoConnectPendingBytes?: number;
  /** Sends and calls held for one node being auto-connected; default 1,000, 1..100,000. */
  readonly autoConnectPendingCount?: number;
  /** Auto-connect attempts in progress at once; traffic to yet another node fails at once; default 16, 1..1,024. */
  readonly maxPendingAutoConnects?: number;
  /** Options of the ActorSystem the node runs (its `node` is the node's name). */
  readonly system?: Omit<ActorSystemOptions, 'node'>;
  /** Prometheus registry for the `molo_node_*` metrics; none by default. */
  readonly registry?: Registry;
}

export interface ResolvedNodeOptions {
  readonly address: NodeAddress;
  readonly secret: Buffer;
  readonly seeds: readonly string[];
  readonly allow: ReadonlySet<string> | undefined;
  readonly listenHost: string;
  readonly tls: NodeTlsOptions | undefined;
  readonly handshakeTimeoutMs: number;
  readonly maxPendingHandshakes: number;
  readonly maxPendingHandshakesPerAddress: number;
  readonly helloDeadlineMs: number;
  readonly detectionMs: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  readonly maxFrameBytes: number;
  readonly sendQueueBytes: number;
  readonly fullPolicy: FullPolicy;
  readonly remoteSpawn: RemoteSpawnPolicy;
  readonly autoConnect: boolean;
  readonly autoConnectPendingBytes: number;
  readonly autoConnectPendingCount: number;
  readonly maxPendingAutoConnects: number;
}

export const MIN_SECRET_BYTES = 16;

/** Every option of `startNode`: a key not here is refused (a typo would otherwise leave a default in force). */
const OPTION_KEYS = {
  name: true, secret: true, seeds: true, allow: true, listenHost: true, tls: true, handshakeTimeoutMs: true,
  maxPendingHandshakes: true, maxPendingHandshakesPerAddress: true, helloDeadlineMs: true, detectionMs: true,
  reconnectMinMs: true, reconnectMaxMs: true, maxFrameBytes: true, sendQueueBytes: true, fullPolicy: true,
  remoteSpawn: true, autoConnect: true, autoConnectPendingBytes: true, autoConnectPendingCount: true,
  maxPendingAutoConnects: true, system: true, registry: true,
} as const satisfies Record<keyof NodeOptions, true>;

function refuseUnknownKeys(options: object): void {
  const unknown = unknownOptionKey(options, Object.keys(OPTION_KEYS));
  if (unknown !== undefined) throw new InvalidNodeOption(unknown.key, unknown.detail);
}

function integer(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidNodeOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  }
  return value;
}

export function resolveNodeOptions(options: NodeOptions): ResolvedNodeOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidNodeOption('options', 'must be an object');
  refuseUnknownKeys(options);
  const address = parseNodeName(options.name, true);
  const secret = typeof options.secret === 'string' ? Buffer.from(options.secret) : options.secret;
  if (!Buffer.isBuffer(secret) || secret.length < MIN_SECRET_BYTES) {
    throw new InvalidNodeOption('secret', `must be a string or Buffer of at least ${MIN_SECRET_BYTES} bytes`);
  }
  const seeds = [...(options.seeds ?? [])];
  for (const seed of seeds) parseNodeName(seed);
  if (options.allow !== undefined) for (const allowed of options.allow) parseNodeName(allowed);
  const maxFrameBytes = integer('maxFrameBytes', options.maxFrameBytes, DEFAULT_PAYLOAD_LIMIT_BYTES, 1_024, MAX_PAYLOAD_LIMIT_BYTES);
  const sendQueueBytes = integer('sendQueueBytes', options.sendQueueBytes, Math.max(4 * 1_048_576, 2 * (maxFrameBytes + 16)), 2 * (maxFrameBytes + 16), 1_073_741_824);
  const reconnectMinMs = integer('reconnectMinMs', options.reconnectMinMs, 100, 10, 600_000);
  const reconnectMaxMs = integer('reconnectMaxMs', options.reconnectMaxMs, Math.max(5_000, reconnectMinMs), reconnectMinMs, 600_000);
  const fullPolicy = options.fullPolicy ?? 'drop-newest';
  if (fullPolicy !== 'drop-newest' && fullPolicy !== 'disconnect') {
    throw new InvalidNodeOption('fullPolicy', `must be 'drop-newest' or 'disconnect', got ${String(fullPolicy)}`);
  }
  if (options.tls !== undefined && (options.tls.key === undefined || options.tls.cert === undefined || options.tls.ca === undefined)) {
    throw new InvalidNodeOption('tls', 'needs key, cert and ca');
  }
  if (options.autoConnect !== undefined && typeof options.autoConnect !== 'boolean') {
    throw new InvalidNodeOption('autoConnect', 'must be a boolean');
  }
  const handshakeTimeoutMs = integer('handshakeTimeoutMs', options.handshakeTimeoutMs, 5_000, 50, 60_000);
  const maxPendingHandshakes = integer('maxPendingHandshakes', options.maxPendingHandshakes, 64, 1, 4_096);
  const minPending = maxFrameBytes + 16;
  const autoConnectPendingBytes = integer('autoConnectPendingBytes', options.autoConnectPendingBytes, Math.min(sendQueueBytes, Math.max(1_048_576, minPending)), minPending, sendQueueBytes);
  return {
    address,
    secret,
    seeds,
    allow: options.allow === undefined ? undefined : new Set(options.allow),
    listenHost: options.listenHost ?? address.host,
    tls: options.tls,
    handshakeTimeoutMs,
    maxPendingHandshakes,
    maxPendingHandshakesPerAddress: integer('maxPendingHandshakesPerAddress', options.maxPendingHandshakesPerAddress, Math.min(8, maxPendingHandshakes), 1, maxPendingHandshakes),
    helloDeadlineMs: integer('helloDeadlineMs', options.helloDeadlineMs, Math.min(2_000, handshakeTimeoutMs), Math.min(50, handshakeTimeoutMs), handshakeTimeoutMs),
    detectionMs: integer('detectionMs', options.detectionMs, 10_000, 200, 600_000),
    reconnectMinMs,
    reconnectMaxMs,
    maxFrameBytes,
    sendQueueBytes,
    fullPolicy,
    remoteSpawn: remoteSpawnPolicy(options.remoteSpawn),
    autoConnect: options.autoConnect ?? true,
    autoConnectPendingBytes,
    autoConnectPendingCount: integer('autoConnectPendingCount', options.autoConnectPendingCount, 1_000, 1, 100_000),
    maxPendingAutoConnects: integer('maxPendingAutoConnects', options.maxPendingAutoConnects, 16, 1, 1_024),
  };
}

function remoteSpawnPolicy(value: RemoteSpawnPolicy | undefined): RemoteSpawnPolicy {
  if (value === undefined || typeof value === 'boolean') return value ?? false;
  if (!Array.isArray(value)) throw new InvalidNodeOption('remoteSpawn', 'must be a boolean or a list of directories (file: URLs or absolute paths)');
  return spawnDirectories(value);
}

/** System options for a node: its name, and a payload cap no larger than the frame cap. */
export function systemOptionsFor(node: string, resolved: ResolvedNodeOptions, options: NodeOptions): ActorSystemOptions {
  return { ...options.system, node, payloadLimitBytes: options.system?.payloadLimitBytes ?? resolved.maxFrameBytes };
}

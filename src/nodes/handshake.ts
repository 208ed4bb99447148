/**
 * The handshake that opens a link between two nodes: each side proves it holds the cluster secret
 * by an HMAC over a fresh challenge from the other side, so the secret never travels and a recorded
 * handshake cannot be replayed. The acceptor proves itself first (its proof covers the initiator's
 * challenge); each proof is bound to a role label and to both names, so one side's proof is never
 * valid as the other's. Proofs are compared in constant time.
 *
 * Messages are msgpack arrays behind a u32 length, each at most {@link MAX_HANDSHAKE_MESSAGE_BYTES}:
 *   initiator → hello [version, name, challenge]
 *   acceptor  → challenge [name, challenge, proof]   (or refused [reason])
 *   initiator → proof [proof, info]
 *   acceptor  → welcome [info]                        (or refused [reason])
 * After `welcome`, both sides switch the socket to frames (connection.ts). The caller enforces the
 * deadline by destroying the socket, which fails the pending read.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { pack, unpack } from 'msgpackr';
import { HandshakeRefused, type RefusalReason } from './errors.js';
import { parseNodeName } from './names.js';

/** 2: the net kernel is called by name (named-call.ts), so node info no longer carries its id. */
export const HANDSHAKE_VERSION = 2;
export const MAX_HANDSHAKE_MESSAGE_BYTES = 1_024;
const CHALLENGE_BYTES = 32;
const PROOF_BYTES = 32;

/** What each side tells the other once authenticated. */
export interface PeerInfo {
  /** Creation of the peer's main system (the origin of its calls and monitors). */
  readonly creation: number;
  readonly maxFrameBytes: number;
  readonly sendQueueBytes: number;
}

export interface HandshakeResult {
  readonly peer: string;
  readonly info: PeerInfo;
  /** Bytes read past the last handshake message: the first frames. */
  readonly leftover: Buffer;
}

export interface HandshakeSide {
  readonly name: string;
  readonly secret: Buffer;
  readonly info: PeerInfo;
  /** Acceptor: may `peer` connect? A reason refuses it. */
  admit(peer: string): RefusalReason | undefined;
}

/** Reads length-prefixed handshake messages from a socket until detached. */
class MessageReader {
  #buffer: Buffer = Buffer.alloc(0);
  #waiter: { resolve(value: unknown[]): void; reject(error: unknown): void } | undefined;
  #failure: unknown;
  readonly #onData = (chunk: Buffer): void => {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    this.#pump();
  };
  readonly #onEnd = (): void => this.#fail(new HandshakeRefused('malformed', this.peer, 'the connection closed during the handshake'));

  peer: string | undefined;

  constructor(readonly socket: Socket) {
    socket.on('data', this.#onData);
    socket.on('close', this.#onEnd);
    socket.on('end', this.#onEnd);
  }

  read(): Promise<unknown[]> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#pump();
    });
  }

  #fail(error: unknown): void {
    this.#failure ??= error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(this.#failure);
  }

  /** Parses one message only when one is awaited, so frames after the last one stay raw. */
  #pump(): void {
    if (this.#waiter === undefined) {
      // Nobody reads yet: a peer that floods the handshake is cut off rather than buffered.
      if (this.#buffer.length > 2 * MAX_HANDSHAKE_MESSAGE_BYTES) {
        this.#fail(new HandshakeRefused('malformed', this.peer, 'too much data before the handshake finished'));
      }
      return;
    }
    if (this.#buffer.length < 4) return;
    const length = this.#buffer.readUInt32BE(0);
    if (length === 0 || length > MAX_HANDSHAKE_MESSAGE_BYTES) {
      this.#fail(new HandshakeRefused('malformed', this.peer, `a handshake message of ${length} bytes`));
      return;
    }
    if (this.#buffer.length < 4 + length) return;
    const body = this.#buffer.subarray(4, 4 + length);
    this.#buffer = this.#buffer.subarray(4 + length);
    let value: unknown;
    try {
      value = unpack(body);
    } catch {
      value = undefined;
    }
    if (!Array.isArray(value)) {
      this.#fail(new HandshakeRefused('malformed', this.peer, 'a handshake message that is not an array'));
      return;
    }
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter.resolve(value);
  }

  /** Stops reading; what was read past the last message is returned. */
  detach(): Buffer {
    this.socket.off('data', this.#onData);
    this.socket.off('close', this.#onEnd);
    this.socket.off('end', this.#onEnd);
    return this.#buffer;
  }
}

/** Writes a refusal the dialling side reads as a typed `HandshakeRefused` (the node's busy answer uses it too). */
export function writeRefusal(socket: Socket, reason: RefusalReason): void {
  write(socket, ['refused', reason]);
}

function write(socket: Socket, message: readonly unknown[]): void {
  const body = pack(message);
  const bytes = Buffer.allocUnsafe(4 + body.length);
  bytes.writeUInt32BE(body.length, 0);
  body.copy(bytes, 4);
  socket.write(bytes);
}

/** Refuses: tells the peer why (best effort) and fails the handshake here. */
function refuse(socket: Socket, reason: RefusalReason, peer: string | undefined, detail: string): never {
  try {
    write(socket, ['refused', reason]);
  } catch {
    // The socket may be gone already.
  }
  throw new HandshakeRefused(reason, peer, detail);
}

/** The proof a side gives: HMAC-SHA256 of its role, the other side's challenge and both names, length-prefixed. */
function proofOf(secret: Buffer, role: 'acceptor' | 'initiator', challenge: Buffer, initiator: string, acceptor: string): Buffer {
  const hmac = createHmac('sha256', secret);
  for (const part of [Buffer.from(`molo-node-v${HANDSHAKE_VERSION}-${role}`), challenge, Buffer.from(initiator), Buffer.from(acceptor)]) {
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(part.length, 0);
    hmac.update(length).update(part);
  }
  return hmac.digest();
}

function proofMatches(expected: Buffer, given: unknown): boolean {
  return Buffer.isBuffer(given) && given.length === PROOF_BYTES && timingSafeEqual(expected, given);
}

function checkInfo(value: unknown, peer: string, socket: Socket): PeerInfo {
  const ok =
    Array.isArray(value) &&
    value.length === 3 &&
    value.every((field) => Number.isInteger(field) && (field as number) > 0 && (field as number) <= 0xffff_ffff);
  if (!ok) refuse(socket, 'malformed', peer, 'malformed node info');
  const [creation, maxFrameBytes, sendQueueBytes] = value as number[];
  return { creation: creation!, maxFrameBytes: maxFrameBytes!, sendQueueBytes: sendQueueBytes! };
}

const infoTuple = (info: PeerInfo): number[] => [info.creation, info.maxFrameBytes, info.sendQueueBytes];

function refusedBy(message: unknown[], peer: string | undefined): void {
  if (message[0] === 'refused') {
    const reason = typeof message[1] === 'string' ? message[1] : 'unknown';
    throw new HandshakeRefused(reason as RefusalReason, peer, 'refused by the peer');
  }
}

/** The dialling side: `expected` is the node it meant to reach. */
export async function initiate(socket: Socket, side: HandshakeSide, expected: string): Promise<HandshakeResult> {
  const reader = new MessageReader(socket);
  reader.peer = expected;
  const challenge = randomBytes(CHALLENGE_BYTES);
  write(socket, ['hello', HANDSHAKE_VERSION, side.name, challenge]);
  const answer = await reader.read();
  refusedBy(answer, expected);
  const [kind, peer, peerChallenge, proof] = answer;
  if (kind !== 'challenge' || answer.length !== 4 || !Buffer.isBuffer(peerChallenge) || peerChallenge.length !== CHALLENGE_BYTES) {
    refuse(socket, 'malformed', expected, 'expected a challenge');
  }
  if (peer !== expected) refuse(socket, 'wrong_node', expected, `the peer is ${String(peer).slice(0, 300)}`);
  if (!proofMatches(proofOf(side.secret, 'acceptor', challenge, side.name, expected), proof)) {
    refuse(socket, 'auth', expected, 'the peer does not hold the cluster secret');
  }
  write(socket, ['proof', proofOf(side.secret, 'initiator', peerChallenge as Buffer, side.name, expected), infoTuple(side.info)]);
  const welcome = await reader.read();
  refusedBy(welcome, expected);
  if (welcome[0] !== 'welcome' || welcome.length !== 2) refuse(socket, 'malformed', expected, 'expected a welcome');
  const info = checkInfo(welcome[1], expected, socket);
  return { peer: expected, info, leftover: reader.detach() };
}

/**
 * The listening side. `helloReceived` is told once a complete, well-formed hello is in (the node
 * stops counting the socket as idle). Whether the peer is admitted (not linked already, in `allow`)
 * is asked only after it proved the secret: before that, every name gets the same challenge, so an
 * unauthenticated client cannot list the cluster's members.
 */
export async function accept(socket: Socket, side: HandshakeSide, helloReceived: () => void = () => {}): Promise<HandshakeResult> {
  const reader = new MessageReader(socket);
  const hello = await reader.read();
  const [kind, version, peer, peerChallenge] = hello;
  if (kind !== 'hello' || hello.length !== 4 || !Buffer.isBuffer(peerChallenge) || peerChallenge.length !== CHALLENGE_BYTES) {
    refuse(socket, 'malformed', undefined, 'expected a hello');
  }
  if (version !== HANDSHAKE_VERSION) refuse(socket, 'version', undefined, `protocol version ${String(version)}`);
  try {
    parseNodeName(peer);
  } catch (error) {
    refuse(socket, 'bad_name', undefined, (error as Error).message);
  }
  const name = peer as string;
  reader.peer = name;
  if (name === side.name) refuse(socket, 'same_name', name, 'the peer uses this node\'s name');
  helloReceived();
  const challenge = randomBytes(CHALLENGE_BYTES);
  write(socket, ['challenge', side.name, challenge, proofOf(side.secret, 'acceptor', peerChallenge as Buffer, name, side.name)]);
  const answer = await reader.read();
  refusedBy(answer, name);
  const [proofKind, proof, info] = answer;
  if (proofKind !== 'proof' || answer.length !== 3) refuse(socket, 'malformed', name, 'expected a proof');
  if (!proofMatches(proofOf(side.secret, 'initiator', challenge, name, side.name), proof)) {
    refuse(socket, 'auth', name, 'the peer does not hold the cluster secret');
  }
  const peerInfo = checkInfo(info, name, socket);
  // Admitted only now, with the secret proven; answered the same for every name before this.
  const refusal = side.admit(name);
  if (refusal !== undefined) refuse(socket, refusal, name, 'not admitted');
  write(socket, ['welcome', infoTuple(side.info)]);
  return { peer: name, info: peerInfo, leftover: reader.detach() };
}

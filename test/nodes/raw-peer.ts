/**
 * A hand-driven peer for hostile tests: a raw socket that completes the real handshake (or not)
 * and then writes whatever records the test wants, reading only if told to.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { pack, unpack } from 'msgpackr';
import { encodeFrame } from '../../src/actors/placement/wire.js';
import type { Frame } from '../../src/actors/placement/frames.js';
import type { Node } from '../../src/nodes/index.js';
import { HANDSHAKE_VERSION, initiate, type HandshakeResult } from '../../src/nodes/handshake.js';
import { parseNodeName } from '../../src/nodes/names.js';
import { afterEachTest } from '../support/file-hooks.js';
import { SECRET } from './support.js';

export interface RawPeer {
  readonly socket: Socket;
  readonly name: string;
  readonly result: HandshakeResult;
  readonly closed: Promise<void>;
  /** Writes one record: u32 length, then the bytes. */
  record(bytes: Uint8Array): void;
  /** Encodes and writes a frame for the node's main system. */
  frame(frame: Frame): void;
}

const sockets = new Set<Socket>();
afterEachTest(() => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
});

/** A plain TCP connection to `node`, destroyed after the test. */
export function rawSocket(node: Node): Promise<Socket> {
  const { host, port } = parseNodeName(node.name);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => resolve(socket));
    sockets.add(socket);
    socket.once('error', reject);
  });
}

export async function rawPeer(node: Node, name: string, options: { secret?: string; sendQueueBytes?: number } = {}): Promise<RawPeer> {
  const socket = await rawSocket(node);
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const info = { creation: 77, maxFrameBytes: 1_048_576, sendQueueBytes: options.sendQueueBytes ?? 4 * 1_048_576 };
  const result = await initiate(socket, { name, secret: Buffer.from(options.secret ?? SECRET), info, admit: () => undefined }, node.name);
  const record = (bytes: Uint8Array): void => {
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(bytes.byteLength, 0);
    socket.write(Buffer.concat([head, bytes]));
  };
  return {
    socket,
    name,
    result,
    closed,
    record,
    frame: (frame) => record(encodeFrame(result.info.creation, frame, 1_048_576)),
  };
}

export interface HelloAnswer {
  readonly socket: Socket;
  /** The first message's kind (`challenge`, `refused`), or `closed` if the node closed without a word. */
  readonly kind: string;
  /** The whole first message. */
  readonly message: readonly unknown[];
  /** Its size on the wire. */
  readonly bytes: number;
  readonly ms: number;
}

/**
 * Sends a well-formed hello naming `name` (a fresh challenge) and waits for the node's first answer;
 * the socket then stays open and silent (a handshake stalled after its hello) until the test ends.
 */
export async function rawHello(node: Node, name: string, localAddress?: string): Promise<HelloAnswer> {
  const { host, port } = parseNodeName(node.name);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const opened = connect({ host, port, localAddress }, () => resolve(opened));
    sockets.add(opened);
    opened.once('error', reject);
  });
  socket.on('error', () => {});
  const started = Date.now();
  const body = pack(['hello', HANDSHAKE_VERSION, name, randomBytes(32)]);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  socket.write(Buffer.concat([head, body]));
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      if (buffer.length < 4 || buffer.length < 4 + buffer.readUInt32BE(0)) return;
      socket.off('data', onData);
      const length = buffer.readUInt32BE(0);
      const message = unpack(buffer.subarray(4, 4 + length)) as unknown[];
      resolve({ socket, kind: String(message[0]), message, bytes: 4 + length, ms: Date.now() - started });
    };
    socket.on('data', onData);
    socket.once('close', () => resolve({ socket, kind: 'closed', message: [], bytes: 0, ms: Date.now() - started }));
  });
}

/**
 * A hand-driven peer for hostile tests: a raw socket that completes the real handshake (or not)
 * and then writes whatever records the test wants, reading only if told to.
 */
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { encodeFrame } from '../../src/actors/placement/wire.js';
import type { Frame } from '../../src/actors/placement/frames.js';
import type { Node } from '../../src/nodes/index.js';
import { initiate, type HandshakeResult } from '../../src/nodes/handshake.js';
import { parseNodeName } from '../../src/nodes/names.js';
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
afterEach(() => {
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
  const info = { creation: 77, kernelId: 1, maxFrameBytes: 1_048_576, sendQueueBytes: options.sendQueueBytes ?? 4 * 1_048_576 };
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

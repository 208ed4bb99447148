/**
 * The connection's transport: opening the socket (TCP, or the Unix socket in a directory given as
 * host), turning its events into messages for the owning actor, and the TLS upgrade after the
 * server accepted an SSLRequest.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ActorRuntime, Ref } from '../../actors/index.js';
import type { ResolvedPgConfig } from './config.js';

export class SocketData {
  constructor(
    readonly socket: Socket,
    readonly chunk: Buffer,
  ) {}
}
export class SocketError {
  constructor(
    readonly socket: Socket,
    readonly error: Error,
  ) {}
}
export class SocketClosed {
  constructor(readonly socket: Socket) {}
}
export class SocketDrain {
  constructor(readonly socket: Socket) {}
}
export type SocketEvent = SocketData | SocketError | SocketClosed | SocketDrain;

export function openSocket(config: ResolvedPgConfig): Socket {
  if (config.socketPath !== undefined) return netConnect(config.socketPath);
  const socket = netConnect({ host: config.host, port: config.port });
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  return socket;
}

/** Every event of `socket` becomes a message to `owner`, tagged with the socket (a replaced socket's late events are ignored). */
export function attachSocket(socket: Socket, system: ActorRuntime, owner: Ref): void {
  socket.on('data', (chunk: Buffer) => system.send(owner, new SocketData(socket, chunk)));
  socket.on('error', (error: Error) => system.send(owner, new SocketError(socket, error)));
  socket.on('close', () => system.send(owner, new SocketClosed(socket)));
  socket.on('drain', () => system.send(owner, new SocketDrain(socket)));
}

/** Wraps the plain socket in TLS; its own listeners are removed so that only the TLS socket reports. */
export function upgradeToTls(socket: Socket, config: ResolvedPgConfig): Socket {
  socket.removeAllListeners('data');
  socket.removeAllListeners('close');
  socket.removeAllListeners('drain');
  // Server name indication only for names: an IP address there is refused by RFC 6066 (and Node warns).
  const servername = isIP(config.host) === 0 ? { servername: config.host } : {};
  return tlsConnect({ ...servername, ...(config.ssl as object), socket });
}

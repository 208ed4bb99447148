/**
 * CancelRequest: asks the server, on a separate connection, to cancel whatever the backend
 * identified by BackendKeyData is running. The server answers nothing and closes the socket; the
 * statement then fails on its own connection with SQLSTATE 57014.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { serialize } from 'pg-protocol';
import type { ResolvedPgConfig } from './config.js';
import { upgradeToTls } from './socket.js';

/** A cancel that has not completed by then is abandoned (its socket destroyed). */
export const CANCEL_TIMEOUT_MS = 5_000;

export interface BackendKey {
  readonly processId: number;
  readonly secretKey: number;
}

/** Sends a CancelRequest; resolves once the server closed the socket (or it failed: cancel is best effort). */
export function sendCancelRequest(config: ResolvedPgConfig, key: BackendKey): Promise<void> {
  return new Promise<void>((resolve) => {
    const message = serialize.cancel(key.processId, key.secretKey);
    let socket: Socket = config.socketPath !== undefined ? netConnect(config.socketPath) : netConnect(config.port, config.host);
    const timer = setTimeout(() => socket.destroy(), CANCEL_TIMEOUT_MS);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const watch = (s: Socket): void => {
      s.on('error', done);
      s.on('close', done);
    };
    watch(socket);
    if (config.ssl === false || config.socketPath !== undefined) {
      socket.end(message);
      socket.resume();
      return;
    }
    // Inside TLS too, when the connection uses it: the backend's secret key stays off the wire.
    socket.write(serialize.requestSsl());
    socket.once('data', (answer: Buffer) => {
      if (answer.length !== 1 || answer[0] !== 0x53) {
        done();
        return;
      }
      socket.removeAllListeners('error');
      const tls = upgradeToTls(socket, config);
      socket = tls;
      watch(tls);
      tls.end(message);
      tls.resume();
    });
  });
}

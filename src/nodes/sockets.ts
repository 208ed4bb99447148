/** The node's listening server and its outgoing connections: plain TCP, or TLS verified both ways. */
import { createServer as createTcpServer, connect as tcpConnect, isIP, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import type { NodeTlsOptions } from './options.js';

/** Listens on host:port (0: a free port); resolves once listening. */
export async function listen(host: string, port: number, tls: NodeTlsOptions | undefined, handshakeTimeoutMs: number): Promise<Server> {
  // requestCert with rejectUnauthorized: a peer without a certificate from the CA is refused.
  // The node counts and deadlines each socket from its TCP accept; Node's own TLS deadline (120 s
  // by default) is only a backstop, set to the handshake's.
  const server: Server = tls
    ? createTlsServer({ key: tls.key, cert: tls.cert, ca: tls.ca as string, requestCert: true, rejectUnauthorized: true, handshakeTimeout: handshakeTimeoutMs })
    : createTcpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** Dials host:port; `connected` settles when the connection (and the TLS handshake) is done. */
export function dial(host: string, port: number, tls: NodeTlsOptions | undefined): { socket: Socket; connected: Promise<void> } {
  let socket!: Socket;
  const connected = new Promise<void>((resolve, reject) => {
    socket = tls
      ? tlsConnect({ host, port, key: tls.key, cert: tls.cert, ca: tls.ca as string, servername: isIP(host) === 0 ? host : undefined }, resolve)
      : tcpConnect({ host, port }, resolve);
    socket.once('error', reject);
  });
  return { socket, connected };
}

import { createServer } from 'node:net';

/**
 * A port the kernel just had free on 127.0.0.1 (bound, then released): for a server a test starts
 * a moment later, or as a port nothing listens on.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Entry of a host: a worker thread or a child process running its own ActorSystem with the node
 * name of its parent and a creation of its own. It talks only to its parent, over a FrameLink (a
 * private MessagePort for a thread, pipe fd 3 for a process), and ends when the parent tells it to
 * (its last actor exited), when the parent goes away, or when it crashes.
 */
import { Socket } from 'node:net';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { ActorSystem } from '../system.js';
import { FrameLink, type LinkWire } from './frame-link.js';
import { HOST_CHANNEL_FD, type HostInit } from './host-channel.js';
import { HostRouter, type ParentChannel } from './host-router.js';
import { channelLimits } from './limits.js';
import type { ThreadPreload } from './host-loaders.js';
import { useBundledModules } from './source-bundle.js';

function readInit(): HostInit {
  if (!isMainThread) return (workerData as { init: HostInit }).init;
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('host-main runs only as a placement host (started by spawnPlaced)');
  return JSON.parse(raw) as HostInit;
}

interface Transport {
  readonly wire: LinkWire;
  /** Unframed: for tests that play a hostile host. */
  raw(data: unknown): void;
  listen(receive: (chunk: Uint8Array) => void): void;
}

function threadTransport(): Transport {
  const data = workerData as { port: MessagePort };
  const port = data.port;
  // Only the private port carries frames; nothing posted on parentPort reaches the parent.
  parentPort?.close();
  return {
    wire: { write: (batch) => port.postMessage(batch, [batch.buffer as ArrayBuffer]) },
    raw: (value) => port.postMessage(value),
    listen(receive) {
      port.on('message', (value: unknown) => {
        if (value instanceof Uint8Array) receive(value);
        else process.exit(1);
      });
    },
  };
}

function processTransport(): Transport {
  const socket = new Socket({ fd: HOST_CHANNEL_FD, readable: true, writable: true });
  // The parent is gone: nothing could reach this host's actors any more.
  const orphaned = (): never => process.exit(0);
  socket.on('end', orphaned);
  socket.on('close', orphaned);
  socket.on('error', orphaned);
  return {
    wire: { write: (batch) => void socket.write(batch) },
    raw: (value) => void socket.write(value as Uint8Array),
    listen: (receive) => void socket.on('data', receive),
  };
}

const init = readInit();
if (!isMainThread) {
  const data = workerData as { modules?: Record<string, string>; deferredPreloads?: ThreadPreload[] };
  useBundledModules(data.modules, data.deferredPreloads);
}
const transport = isMainThread ? processTransport() : threadTransport();
// A parent that breaks the channel's rules cannot be trusted with anything more.
const link = new FrameLink(channelLimits(init.payloadLimitBytes), transport.wire, {
  record: (bytes) => hostRouter.receive(bytes),
  violation: () => process.exit(1),
});
const channel: ParentChannel = {
  send: (bytes, mode) => link.send(bytes, mode),
  exit: () => process.exit(0),
  raw: (data) => transport.raw(data),
};
let router: HostRouter | undefined;
const system = new ActorSystem({
  node: init.node,
  creation: init.creation,
  payloadLimitBytes: init.payloadLimitBytes,
  callTimeoutMs: init.callTimeoutMs,
  observer: {
    spawned() {},
    exited() {
      router?.actorExited();
    },
  },
});
const hostRouter = new HostRouter(system, init, channel);
router = hostRouter;
system.setRouter(hostRouter);
transport.listen((chunk) => link.receive(chunk));

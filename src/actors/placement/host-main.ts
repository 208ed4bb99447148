/**
 * Entry of a host: a worker thread or a child process running its own ActorSystem with the node
 * name of its parent and a creation of its own. It talks only to its parent, and ends when the
 * parent tells it to (its last actor exited), when the parent goes away, or when it crashes.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ActorSystem } from '../system.js';
import type { HostInit } from './host-channel.js';
import { HostRouter, type ParentChannel } from './host-router.js';

function readInit(): HostInit {
  if (!isMainThread) return (workerData as { init: HostInit }).init;
  const raw = process.argv[2];
  if (raw === undefined || process.send === undefined) {
    throw new Error('host-main runs only as a placement host (started by spawnPlaced)');
  }
  return JSON.parse(raw) as HostInit;
}

function parentChannel(): { channel: ParentChannel; listen(receive: (data: unknown) => void): void } {
  if (!isMainThread) {
    const port = parentPort!;
    return {
      channel: { post: (bytes) => port.postMessage(bytes), exit: () => process.exit(0) },
      listen: (receive) => port.on('message', receive),
    };
  }
  return {
    channel: {
      post(bytes) {
        if (process.connected) process.send!(bytes, undefined, undefined, (error: Error | null) => void error);
      },
      exit: () => process.exit(0),
    },
    listen(receive) {
      process.on('message', receive);
      // The parent is gone: nothing could reach this host's actors any more.
      process.on('disconnect', () => process.exit(0));
    },
  };
}

const init = readInit();
const { channel, listen } = parentChannel();
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
listen((data) => hostRouter.receive(data));

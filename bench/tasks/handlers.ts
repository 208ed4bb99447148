/**
 * The no-op handler Molo's `thread` contenders load in their hosts. It tells the bench thread that
 * it started (the task's `seq`) on a BroadcastChannel, which reaches every thread of this process.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { TaskHandlers } from '../../src/bus/tasks/index.js';

export const HANDLER_CHANNEL = 'molo-bench-tasks';

const channel = new BroadcastChannel(HANDLER_CHANNEL);
// A host is ended by its executor; an open channel must not keep it up.
channel.unref();

export const handlers: TaskHandlers = {
  noop(payload) {
    channel.postMessage((payload as { seq: number }).seq);
  },
};

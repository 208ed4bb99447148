/**
 * Starting a host (a worker thread or a child process) and carrying bytes to and from it. The host
 * runs `host-main`; from source (tsx, vitest) it is a .ts file, so the host loads tsx first, and a
 * thread host replays the app's own loaders (host-loaders.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { ShutdownWith } from '../exit.js';
import { signalGroup, spawnInGroup } from '../os/process-group.js';
import { FrameLink, type LinkLimits } from './frame-link.js';
import { ownTsxImport, THREAD_BOOT, threadPreloads } from './host-loaders.js';
import { channelLimits } from './limits.js';
import type { HostBundle } from './source-bundle.js';

/** Where a placed actor runs: the main event loop, a worker thread, or a child process. */
import type { Placement } from './types.js';

export type { Placement } from './types.js';
export type HostPlacement = Exclude<Placement, 'loop'>;

/** The child's end of a process host's frame pipe. */
export const HOST_CHANNEL_FD = 3;

/** What a host needs to start its own system: the same node, its own creation, the parent's limits. */
export interface HostInit {
  readonly node: string;
  readonly creation: number;
  readonly parent: number;
  readonly payloadLimitBytes: number;
  readonly callTimeoutMs: number;
  readonly placement: HostPlacement;
  /** V8 old-generation cap of the host, in MB; over it the host dies (out of memory). */
  readonly maxHeapMb?: number | undefined;
}

export interface HostEvents {
  /** A frame from the host (a view, valid during the call). */
  record(bytes: Uint8Array): void;
  /**
   * The host broke the channel's rules (garbage, a record over the cap, more in flight than its
   * budget): its channel is closed and it is being killed; `exit` follows.
   */
  violation(why: string): void;
  /** The host is gone; `reason` is what its actors' links and monitors see. Called once. */
  exit(reason: ShutdownWith, error: Error | undefined): void;
}

export interface HostChannel {
  readonly pid: number | undefined;
  readonly threadId: number | undefined;
  /** Bytes and flow control of the channel. */
  readonly link: FrameLink;
  /** Stops the host now (worker.terminate, SIGKILL to a process's group). */
  terminate(): void;
}

const fromSource = import.meta.url.endsWith('.ts');
const entryUrl = new URL(`./host-main.${fromSource ? 'ts' : 'js'}`, import.meta.url);

/** `bundle`: a thread host of Molo's own modules only, loaded from a bundle of them (source-bundle.ts). */
export function startHost(init: HostInit, events: HostEvents, bundle?: HostBundle): HostChannel {
  return init.placement === 'thread' ? startThread(init, events, bundle) : startProcess(init, events);
}

/** Batches larger than this cannot come from a host that keeps to its budget. */
const maxBatchBytes = (limits: LinkLimits): number => limits.budgetBytes + 8;

/**
 * A worker thread. Frames travel on a private MessageChannel as transferred ArrayBuffers (no copy);
 * the host closes its `parentPort`, so nothing else it posts reaches this thread. What arrives is
 * checked before it is parsed: a message that is not a buffer, or is larger than the host's budget,
 * ends the host. (A clone posted on the port has been copied here by then: at most one.)
 */
function startThread(init: HostInit, events: HostEvents, bundle: HostBundle | undefined): HostChannel {
  const appPreloads = threadPreloads();
  // A bundled host boots without loaders and replays them only if it meets a module from outside the bundle.
  const preloads = bundle === undefined ? appPreloads : [];
  const entry = bundle === undefined ? entryUrl : new URL(bundle.entry);
  const { port1: port, port2: hostPort } = new MessageChannel();
  const workerData = { init, entry: entry.href, preloads, port: hostPort, modules: bundle?.modules, deferredPreloads: bundle === undefined ? undefined : appPreloads };
  const resourceLimits = init.maxHeapMb === undefined ? undefined : { maxOldGenerationSizeMb: init.maxHeapMb };
  const options = { workerData, resourceLimits, transferList: [hostPort] };
  const worker = preloads.length === 0 ? new Worker(entry, options) : new Worker(THREAD_BOOT, { ...options, eval: true });
  const limits = channelLimits(init.payloadLimitBytes);
  const cut = (why: string): void => {
    link.close();
    port.close();
    events.violation(why);
    void worker.terminate();
  };
  const link = new FrameLink(limits, { write: (batch) => port.postMessage(batch, [batch.buffer as ArrayBuffer]) }, { record: events.record, violation: cut });
  const take = (data: unknown): void => {
    if (link.closed) return;
    if (!(data instanceof Uint8Array)) cut(`a ${typeof data} instead of bytes`);
    else if (data.byteLength > maxBatchBytes(limits)) cut(`a batch of ${data.byteLength} bytes, over the budget of ${limits.budgetBytes}`);
    else link.receive(data);
  };
  port.on('message', take);
  let lastError: Error | undefined;
  // Without a listener an error in the host would be rethrown here and take the main process down.
  worker.on('error', (error: Error) => {
    lastError = error;
  });
  worker.on('exit', (code: number) => {
    // What the host posted before it ended still counts (a worker's exit can overtake its messages).
    for (let queued = receiveMessageOnPort(port); queued !== undefined && !link.closed; queued = receiveMessageOnPort(port)) {
      take(queued.message);
    }
    link.close();
    port.close();
    events.exit({ shutdown: { thread_exit: code } }, lastError);
  });
  return {
    pid: process.pid,
    threadId: worker.threadId,
    link,
    terminate: () => void worker.terminate(),
  };
}

/**
 * A child process. Frames travel on a pipe of their own (fd 3), not on Node's IPC channel, so no
 * byte the child writes is deserialized by anything but the link, which checks each record's length
 * against the cap before buffering it. Garbage or an oversized length kills the child.
 *
 * The child leads a process group of its own, and is killed as a group: what a handler in it
 * started (a shell, a converter) goes with it, at a hard timeout as when this process dies
 * (os/process-group.ts). On Linux its whole tree is tracked too (os/process-tree.ts: a cgroup, or
 * an environment marker), so a descendant that left the group (`setsid`) is killed with it. A terminal's Ctrl-C no longer reaches it directly: the parent, stopping or
 * dying, ends it.
 */
function startProcess(init: HostInit, events: HostEvents): HostChannel {
  const loader = ownTsxImport();
  const execArgv =
    loader === undefined || process.execArgv.some((arg) => arg.includes('tsx'))
      ? [...process.execArgv]
      : [...process.execArgv, '--import', loader];
  if (init.maxHeapMb !== undefined) execArgv.push(`--max-old-space-size=${init.maxHeapMb}`);
  const child: ChildProcess = spawnInGroup(process.execPath, [...execArgv, fileURLToPath(entryUrl), JSON.stringify(init)], {
    cwd: undefined,
    env: {},
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    // A handler's child that left the group (setsid) is reaped with the host too.
    tree: true,
  });
  const socket = child.stdio[HOST_CHANNEL_FD] as Socket | null;
  const limits = channelLimits(init.payloadLimitBytes);
  let lastError: Error | undefined;
  let exited = false;
  const kill = (): void => void signalGroup(child, 'SIGKILL');
  const cut = (why: string): void => {
    link.close();
    socket?.destroy();
    events.violation(why);
    kill();
  };
  const link = new FrameLink(
    limits,
    {
      write(batch) {
        // A closed pipe means the process is going: its exit reports it.
        if (socket !== null && !socket.destroyed) socket.write(batch);
      },
    },
    { record: events.record, violation: cut },
  );
  socket?.on('data', (chunk: Buffer) => link.receive(chunk));
  socket?.on('error', () => socket.destroy());
  const exit = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (exited) return;
    exited = true;
    link.close();
    socket?.destroy();
    events.exit({ shutdown: { process_exit: code, signal } }, lastError);
  };
  child.on('error', (error: Error) => {
    lastError = error;
    // A process that never started emits no exit.
    if (child.pid === undefined) exit(null, null);
  });
  // `close`, not `exit`: what the child wrote before it ended has been read by then.
  child.on('close', exit);
  return { pid: child.pid, threadId: undefined, link, terminate: kill };
}

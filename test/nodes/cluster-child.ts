import { fork, type ChildProcess } from 'node:child_process';
import { afterEachTest } from '../support/file-hooks.js';
import { reapChildren } from '../support/reap-children.js';
import { projectRoot } from '../support/run-script.js';
import { sleep } from '../support/systems.js';
import { SECRET } from './support.js';

/** Processes of the current test, killed after it. */
const spawned = new Set<ChildProcess>();
afterEachTest(() => reapChildren(spawned));

/** A node running the cluster services in its own OS process (test/nodes/fixtures/cluster-node.ts), driven over IPC. */
export interface ClusterPeer {
  readonly name: string;
  readonly child: ChildProcess;
  run<T = unknown>(cmd: string, ...args: unknown[]): Promise<T>;
}

/**
 * Starts a cluster node as `name@host:0`; `wrap` runs it under another command (`ip netns exec <ns>`).
 * Resolves once it listens.
 */
export function clusterPeer(name: string, secret: string, host = '127.0.0.1', wrap: string[] = []): Promise<ClusterPeer> {
  return forkPeer('test/nodes/fixtures/cluster-node.ts', [`${name}@${host}:0`, secret], wrap);
}

/** A fixture node (`script args…`) driven over IPC as {@link clusterPeer} drives the cluster one; it sends `{ ready: name }` once up. */
export function forkPeer(script: string, args: string[], wrap: string[] = []): Promise<ClusterPeer> {
  const name = args[0]!;
  const child =
    wrap.length === 0
      ? fork(script, args, { cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] })
      : fork(script, args, { cwd: projectRoot, execPath: wrap[0], execArgv: [...wrap.slice(1), process.execPath, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  spawned.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let next = 0;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  return new Promise((resolve, reject) => {
    child.on('message', (message: { ready?: string; id?: number; result?: unknown; error?: string }) => {
      if (message.ready !== undefined) {
        resolve({
          name: message.ready,
          child,
          run: <T>(cmd: string, ...args: unknown[]) =>
            new Promise<T>((resolveRun, rejectRun) => {
              const id = ++next;
              pending.set(id, { resolve: resolveRun as (value: unknown) => void, reject: rejectRun });
              child.send({ id, cmd, args });
            }),
        });
        return;
      }
      const waiter = pending.get(message.id!);
      pending.delete(message.id!);
      if (message.error !== undefined) waiter?.reject(Object.assign(new Error(message.error), { code: message.error }));
      else waiter?.resolve(message.result);
    });
    child.once('close', (code) => {
      for (const waiter of pending.values()) waiter.reject(new Error(`peer ${name} exited`));
      reject(new Error(`peer ${name} exited (${String(code)}): ${stderr}`));
    });
  });
}

/** Polls an async condition. */
export async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

/** Peers connected each to each, their services' state exchanged. */
export async function mesh(names: string[]): Promise<ClusterPeer[]> {
  const peers = await Promise.all(names.map((name) => clusterPeer(name, SECRET)));
  for (let i = 0; i < peers.length; i++) for (let j = i + 1; j < peers.length; j++) await peers[i]!.run('connect', peers[j]!.name);
  // Each service exchanges its state on nodeup; let those settle.
  await until(async () => (await Promise.all(peers.map((peer) => peer.run<string[]>('nodes')))).every((nodes) => nodes.length === peers.length - 1));
  await sleep(100);
  return peers;
}


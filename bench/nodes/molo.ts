/**
 * The Molo side of the nodes suite: this process is node `a`, the peer (peer.ts) runs in a child
 * process. A sender keeps to the link's flow control the way an application should: it pauses a
 * turn whenever more than half the link's queue is in flight, so no message is dropped.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Ref } from '../../src/actors/index.js';
import { startNode, type Node } from '../../src/nodes/index.js';

const PEER = fileURLToPath(new URL('./peer.ts', import.meta.url));
const QUEUE_BYTES = 4 * 1_048_576;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const now = (): number => performance.now();

export interface Measured {
  readonly us: number;
  readonly bytes: number;
}

export interface MoloPair {
  readonly node: Node;
  readonly peer: string;
  readonly counter: Ref;
  readonly echo: Ref;
  stop(): Promise<void>;
}

export async function startPair(): Promise<MoloPair> {
  const secret = randomBytes(24).toString('hex');
  const child = spawn(process.execPath, ['--import', 'tsx', PEER, secret], { stdio: ['ignore', 'pipe', 'inherit'] });
  const peer = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /ready (\S+)\n/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the peer exited (${String(code)})`)));
  });
  const node = await startNode({ name: 'bench-a@127.0.0.1:0', secret, sendQueueBytes: QUEUE_BYTES, system: { logger: false } });
  await node.connect(peer);
  const counter = (await node.whereis('counter', peer))!;
  const echo = (await node.whereis('echo', peer))!;
  return {
    node,
    peer,
    counter,
    echo,
    async stop() {
      await node.stop();
      child.kill('SIGKILL');
    },
  };
}

/** N integers to the remote counter, then a count call behind them: done when it answers N. */
export async function sendRun(pair: MoloPair, n: number): Promise<Measured> {
  const { node, counter } = pair;
  const system = node.system;
  await system.call(counter, 'reset');
  const before = node.stats().bytesSent;
  const start = now();
  for (let i = 0; i < n; i++) {
    system.send(counter, i);
    if ((i & 1_023) === 1_023) while (node.links()[0]!.queuedBytes > QUEUE_BYTES / 2) await turn();
  }
  const count = await system.call<number>(counter, 'count', 600_000);
  const us = (now() - start) * 1_000;
  if (count !== n) throw new Error(`the peer counted ${count} of ${n} messages (${node.stats().queueFull} dropped at a full queue)`);
  return { us, bytes: node.stats().bytesSent - before };
}

/** N sequential call round trips to the remote echo. */
export async function callRun(pair: MoloPair, n: number): Promise<Measured> {
  const { node, echo } = pair;
  const stats = (): number => node.stats().bytesSent + node.stats().bytesReceived;
  const before = stats();
  const start = now();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await node.system.call<number>(echo, i);
  const us = (now() - start) * 1_000;
  if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
  return { us, bytes: stats() - before };
}

/** N call round trips from `concurrency` callers at once, N ÷ concurrency each, one after another in each. */
export async function concurrentCallRun(pair: MoloPair, n: number, concurrency: number): Promise<Measured> {
  const { node, echo } = pair;
  const stats = (): number => node.stats().bytesSent + node.stats().bytesReceived;
  const share = n / concurrency;
  if (!Number.isInteger(share)) throw new Error(`${n} calls do not split evenly among ${concurrency} callers`);
  const before = stats();
  const start = now();
  const sums = await Promise.all(
    Array.from({ length: concurrency }, async (_, caller) => {
      let sum = 0;
      for (let i = caller * share; i < (caller + 1) * share; i++) {
        const value = await node.system.call<number>(echo, i);
        sum += value;
      }
      return sum;
    }),
  );
  const us = (now() - start) * 1_000;
  if (sums.reduce((a, b) => a + b, 0) !== (n * (n - 1)) / 2) throw new Error('wrong replies');
  return { us, bytes: stats() - before };
}

/**
 * A connection flood for port-exhaustion tests, from its own OS process (test/nodes/fixtures/
 * flood-process.ts): `count` idle TCP sockets to a node, each reopened as soon as the node closes
 * it, from several loopback source addresses (the attackers are other hosts; the node under test
 * and its legitimate peers use 127.0.0.1). Never sends a byte.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Node } from '../../src/nodes/index.js';
import { parseNodeName } from '../../src/nodes/names.js';
import { afterEachTest } from '../support/file-hooks.js';
import { reapChildren } from '../support/reap-children.js';
import { projectRoot } from '../support/run-script.js';
import { eventually, sleep } from '../support/systems.js';
import { testNode } from './support.js';

/** Ten loopback addresses other than 127.0.0.1 (Linux routes all of 127/8 to lo). */
export const ATTACKER_ADDRESSES = Array.from({ length: 10 }, (_, index) => `127.0.0.${index + 2}`);

export interface Flood {
  /** Connections opened so far (first opens and reopens), as last reported (every 50 ms). */
  readonly opened: number;
  /** Connections that completed (the node accepted them) so far. */
  readonly connected: number;
  /** Sockets connected and open now. */
  readonly open: number;
  /** Stops the flood: the process is killed, its sockets close. */
  stop(): void;
}

type Child = ChildProcessByStdio<null, Readable, Readable>;
/** Flood processes of the current test, killed after it. */
const spawned = new Set<Child>();
afterEachTest(() => reapChildren(spawned));

/** Starts the flood; resolves at its first report. `reopen: false` opens each socket once. */
export function flood(node: Node, count: number, from: readonly string[] = ATTACKER_ADDRESSES, reopen = true): Promise<Flood> {
  const { host, port } = parseNodeName(node.name);
  const args = ['--import', 'tsx', 'test/nodes/fixtures/flood-process.ts', host, String(port), String(count), from.join(','), reopen ? 'reopen' : 'once'];
  const child = spawn(process.execPath, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.add(child);
  let counts = { opened: 0, connected: 0, open: 0 };
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const handle: Flood = {
    get opened() {
      return counts.opened;
    },
    get connected() {
      return counts.connected;
    },
    get open() {
      return counts.open;
    },
    stop() {
      child.kill('SIGKILL');
    },
  };
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      const last = lines.at(-1);
      if (last === undefined) return;
      counts = JSON.parse(last) as typeof counts;
      resolve(handle);
    });
    child.once('close', (code) => reject(new Error(`the flood process exited (${String(code)}): ${stderr}`)));
  });
}

/** Starts a fresh node and times its connect to `target`; 'late' past `withinMs`. */
export async function timedConnect(target: Node, name: string, options: Parameters<typeof testNode>[1], withinMs: number): Promise<number | string> {
  const node = await testNode(name, options);
  const started = Date.now();
  const outcome = await Promise.race([
    node.connect(target.name).then(
      () => Date.now() - started,
      (error: unknown) => `failed: ${String((error as Error).message)}`,
    ),
    sleep(withinMs).then(() => 'late'),
  ]);
  await node.stop();
  return outcome;
}

/**
 * Waits until the flood holds the node's slots and is reopening, then connects fresh nodes one after
 * another, half a second apart: about 5 s of attack in all.
 */
export async function connectsUnderFlood(target: Node, attack: Flood, options: Parameters<typeof testNode>[1] = {}, rounds = 5): Promise<(number | string)[]> {
  await eventually(() => attack.opened >= 200, 5_000, 'the flood to open its sockets');
  await sleep(500);
  const outcomes: (number | string)[] = [];
  for (let round = 0; round < rounds; round++) {
    outcomes.push(await timedConnect(target, `legit${round}`, options, 2_000));
    await sleep(500);
  }
  return outcomes;
}

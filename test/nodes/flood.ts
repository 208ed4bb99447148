/**
 * A connection flood for port-exhaustion tests: `count` idle TCP sockets to a node, each reopened
 * as soon as the node closes it, from several loopback source addresses (the attackers are other
 * hosts; the node under test and its legitimate peers use 127.0.0.1). Never sends a byte.
 */
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { eventually, sleep } from '../support/systems.js';
import { testNode } from './support.js';
import type { Node } from '../../src/nodes/index.js';
import { parseNodeName } from '../../src/nodes/names.js';

/** Ten loopback addresses other than 127.0.0.1 (Linux routes all of 127/8 to lo). */
export const ATTACKER_ADDRESSES = Array.from({ length: 10 }, (_, index) => `127.0.0.${index + 2}`);

export interface Flood {
  /** Connections opened so far (first opens and reopens). */
  readonly opened: number;
  /** Connections that completed (the node accepted them) so far. */
  readonly connected: number;
  /** Sockets connected and open now. */
  readonly open: number;
  /** Stops reopening and closes every socket. */
  stop(): void;
}

const floods = new Set<Flood>();
afterEach(() => {
  for (const flood of floods) flood.stop();
  floods.clear();
});

export function flood(node: Node, count: number, from: readonly string[] = ATTACKER_ADDRESSES, reopen = true): Flood {
  const { host, port } = parseNodeName(node.name);
  const sockets = new Set<Socket>();
  let opened = 0;
  let open = 0;
  let connectedTotal = 0;
  let stopped = false;
  const openOne = (slot: number): void => {
    if (stopped) return;
    opened++;
    const socket = connect({ host, port, localAddress: from[slot % from.length] });
    sockets.add(socket);
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      connectedTotal++;
      open++;
    });
    socket.on('error', () => {});
    // Drained, never answered: a `busy` frame the node writes is read and ignored.
    socket.on('data', () => {});
    socket.once('close', () => {
      sockets.delete(socket);
      if (connected) open--;
      // Reopened at once, as an attacker holding the port would.
      if (reopen) setImmediate(() => openOne(slot));
    });
  };
  for (let slot = 0; slot < count; slot++) openOne(slot);
  const handle: Flood = {
    get opened() {
      return opened;
    },
    get connected() {
      return connectedTotal;
    },
    get open() {
      return open;
    },
    stop() {
      stopped = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
  floods.add(handle);
  return handle;
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

/** Waits until the flood holds the node's slots and is reopening, then connects fresh nodes one after another. */
export async function connectsUnderFlood(target: Node, attack: Flood, options: Parameters<typeof testNode>[1] = {}, rounds = 4): Promise<(number | string)[]> {
  await eventually(() => attack.opened >= 200, 5_000, 'the flood to open its sockets');
  await sleep(300);
  const outcomes: (number | string)[] = [];
  for (let round = 0; round < rounds; round++) outcomes.push(await timedConnect(target, `legit${round}`, options, 2_000));
  return outcomes;
}

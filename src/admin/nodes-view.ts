/**
 * The admin surface's view of a cluster node (`molo/nodes`): `/nodes` lists this node and every
 * node it linked to since it started (name, state, round-trip time, queued bytes), and
 * `/nodes/<name>/tree` and `/nodes/<name>/processes` read another node's supervision tree and process
 * list through that node's admin actor.
 * The round-trip time is measured when asked: one call to each peer's net kernel, in parallel.
 */
import type { Ref } from '../actors/index.js';
import type { Node } from '../nodes/node.js';
import { Admin, ADMIN_NAME } from './admin-actor.js';
import { AdminNotFound } from './errors.js';
import type { TreeSnapshot } from './tree-snapshot.js';
import type { ProcessSnapshot } from './process-snapshot.js';

export interface NodeLinkReport {
  readonly name: string;
  /** `self` (this node), `up` (linked now), or `down` (linked before). */
  readonly state: 'self' | 'up' | 'down';
  /** Measured now, in ms (null if down, or no answer within the time given). */
  readonly rttMs: number | null;
  /** Bytes queued on the link: unacknowledged by the peer or waiting for credit. */
  readonly queuedBytes: number;
  /** When the link came up (ms since the epoch), if up. */
  readonly upAt: number | null;
  /** Why it went down, if down. */
  readonly downReason: string | null;
}

export interface NodesReport {
  readonly node: string;
  readonly nodes: readonly NodeLinkReport[];
}

/** What the HTTP surface asks of a cluster node. */
export interface ClusterView {
  report(timeoutMs: number): Promise<NodesReport>;
  tree(node: string, timeoutMs: number): Promise<TreeSnapshot>;
  /** Another node's process list, through its admin actor (optional: views built before it answer 404). */
  processes?(node: string, timeoutMs: number): Promise<ProcessSnapshot>;
}

/** Nodes remembered as down at most (the oldest forgotten first). */
export const MAX_REMEMBERED_DOWN_NODES = 1_024;
/** A name no net kernel holds: asking for it measures a plain round trip. */
const PROBE_NAME = 'molo.admin.rtt-probe';
/** How long `/nodes` waits for a peer's round trip before it reports null. */
export const RTT_TIMEOUT_MS = 2_000;

/** The cluster view of `node`, reading trees through the admin actors registered as `admin` (the default name) on each node. */
export function clusterView(node: Node, admin: string = ADMIN_NAME): ClusterView {
  const down = new Map<string, string>();
  node.on('nodeup', (peer) => down.delete(peer));
  node.on('nodedown', (peer, reason) => {
    down.delete(peer);
    down.set(peer, reason);
    if (down.size > MAX_REMEMBERED_DOWN_NODES) down.delete(down.keys().next().value!);
  });
  const rtt = async (peer: string, timeoutMs: number): Promise<number | null> => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
    try {
      const answered = await Promise.race([node.whereis(PROBE_NAME, peer).then(() => true), timeout]);
      return answered === null ? null : Math.round((performance.now() - started) * 1000) / 1000;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  };
  const adminOf = async (name: string, what: string): Promise<Ref> => {
    if (!node.isConnected(name)) throw new AdminNotFound(`/nodes/${name}/${what} (not connected)`);
    const ref = await node.whereis(admin, name);
    if (ref === undefined) throw new AdminNotFound(`/nodes/${name}/${what} (no admin actor there)`);
    return ref;
  };
  return {
    async report(timeoutMs) {
      const links = node.links();
      const rtts = await Promise.all(links.map((link) => rtt(link.node, timeoutMs)));
      const nodes: NodeLinkReport[] = [{ name: node.name, state: 'self', rttMs: 0, queuedBytes: 0, upAt: null, downReason: null }];
      links.forEach((link, i) => nodes.push({ name: link.node, state: 'up', rttMs: rtts[i]!, queuedBytes: link.queuedBytes, upAt: link.upAt, downReason: null }));
      for (const [name, reason] of down) if (!node.isConnected(name)) nodes.push({ name, state: 'down', rttMs: null, queuedBytes: 0, upAt: null, downReason: reason });
      return { node: node.name, nodes };
    },
    async tree(name, timeoutMs) {
      if (name === node.name) return Admin.tree(node.system, admin, timeoutMs);
      return Admin.tree(node.system, await adminOf(name, 'tree'), timeoutMs);
    },
    async processes(name, timeoutMs) {
      if (name === node.name) return Admin.processes(node.system, admin, timeoutMs);
      return Admin.processes(node.system, await adminOf(name, 'processes'), timeoutMs);
    },
  };
}

/** Answers `/nodes` and `/nodes/<name>/tree` (AdminNotFound for anything else, or without a view). */
export async function serveNodes(view: ClusterView | undefined, path: string, timeoutMs: number): Promise<NodesReport | TreeSnapshot | ProcessSnapshot> {
  if (view === undefined) throw new AdminNotFound(`${path} (not a cluster node)`);
  if (path === '/nodes') return view.report(Math.min(timeoutMs, RTT_TIMEOUT_MS));
  const match = /^\/nodes\/([^/]{1,300})\/(tree|processes)$/.exec(path);
  if (match === null) throw new AdminNotFound(path);
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    throw new AdminNotFound(path);
  }
  if (match[2] === 'processes') {
    if (view.processes === undefined) throw new AdminNotFound(path);
    return view.processes(name, timeoutMs);
  }
  return view.tree(name, timeoutMs);
}

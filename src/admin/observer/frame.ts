/**
 * One look at the cluster, as the page draws it: every connected node's tree (with its sections:
 * programs, stream consumers, task pools, replicators, rooms), the node links, the task queues; and
 * the figures the charts plot (rates against the previous look, queue depth, consumer and
 * replication lag).
 * Read only through public APIs: the admin actors (`Admin.tree`), the cluster view, `TaskQueue.queueInfo`.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import type { TaskQueue, TaskQueueInfo } from '../../bus/tasks/api.js';
import { Admin } from '../admin-actor.js';
import type { ClusterView, NodeLinkReport } from '../nodes-view.js';
import type { TreeNode, TreeSnapshot } from '../tree-snapshot.js';

/** Queues one frame describes at most. */
export const MAX_FRAME_QUEUES = 200;

export interface FrameSources {
  readonly runtime: ActorRuntime;
  readonly admin: Ref | string;
  readonly nodes: ClusterView | undefined;
  readonly tasks: TaskQueue | undefined;
  readonly timeoutMs: number;
}

/** A node whose tree could not be read this time. */
export interface TreeFailure {
  readonly node: string;
  readonly error: { readonly code: string; readonly message: string };
}

/** The figures of one look; rates are per second since the previous look (null on the first). */
export interface ObserverSample {
  readonly at: number;
  readonly messagesPerSec: number | null;
  readonly restartsPerSec: number | null;
  readonly tasksPerSec: number | null;
  readonly queueDepth: number;
  readonly consumerLag: number;
  /** Entries the pull replicators of every tree are behind their peers, summed; null with no replicator. */
  readonly replicationLag: number | null;
}

/** Running totals behind the rates. */
export interface FrameTotals {
  readonly messages: number;
  readonly restarts: number;
  readonly tasksDone: number;
}

export interface ObserverFrame {
  readonly at: number;
  /** The node serving the page. */
  readonly node: string;
  /** Links with round-trip times; null on a surface that is not a cluster node. */
  readonly links: readonly NodeLinkReport[] | null;
  readonly trees: readonly (TreeSnapshot | TreeFailure)[];
  /** Null when the surface has no task queue. */
  readonly queues: readonly TaskQueueInfo[] | null;
  readonly sample: ObserverSample;
}

export interface Look {
  readonly frame: ObserverFrame;
  readonly totals: FrameTotals;
}

/** Takes one look; `previous` gives the rates. */
export async function look(sources: FrameSources, previous: Look | undefined): Promise<Look> {
  const at = Date.now();
  const [links, queues] = await Promise.all([
    sources.nodes === undefined ? null : sources.nodes.report(Math.min(sources.timeoutMs, 2_000)).then((report) => report.nodes),
    sources.tasks === undefined ? null : queueInfos(sources.tasks),
  ]);
  const names = links === null ? [sources.runtime.node] : links.filter((link) => link.state !== 'down').map((link) => link.name);
  const trees = await Promise.all(names.map((name) => treeOf(sources, name)));
  const totals = { messages: 0, restarts: 0, tasksDone: 0 };
  let consumerLag = 0;
  let replicationLag: number | null = null;
  for (const tree of trees) {
    if (!('root' in tree) || tree.root === null) continue;
    walk(tree.root, (node) => {
      totals.messages += node.process?.messagesHandled ?? 0;
      totals.restarts += node.restartCount;
    });
    for (const entry of tree.sections.streams ?? []) {
      const lag = (entry.value as { lag?: unknown } | undefined)?.lag;
      if (typeof lag === 'number') consumerLag += lag;
    }
    for (const entry of tree.sections.replication ?? []) {
      const status = entry.value as { direction?: unknown; lag?: unknown } | undefined;
      if (status?.direction === 'pull' && typeof status.lag === 'number') replicationLag = (replicationLag ?? 0) + status.lag;
    }
  }
  let queueDepth = 0;
  for (const queue of queues ?? []) {
    queueDepth += queue.depth;
    totals.tasksDone += queue.counts.succeeded + queue.counts['failed-permanent'] + queue.counts['dead-lettered'];
  }
  const rate = (key: keyof FrameTotals): number | null => {
    if (previous === undefined) return null;
    const seconds = (at - previous.frame.at) / 1_000;
    // A restarted child's counters begin again, a purge lowers the counts: never a negative rate.
    return seconds <= 0 ? null : Math.max(0, (totals[key] - previous.totals[key]) / seconds);
  };
  const sample: ObserverSample = { at, messagesPerSec: rate('messages'), restartsPerSec: rate('restarts'), tasksPerSec: rate('tasksDone'), queueDepth, consumerLag, replicationLag };
  return { frame: { at, node: sources.runtime.node, links, trees, queues, sample }, totals };
}

async function treeOf(sources: FrameSources, name: string): Promise<TreeSnapshot | TreeFailure> {
  try {
    if (sources.nodes !== undefined) return await sources.nodes.tree(name, sources.timeoutMs);
    return await Admin.tree(sources.runtime, sources.admin, sources.timeoutMs);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { node: name, error: { code: typeof code === 'string' ? code : 'ADMIN_SNAPSHOT_FAILED', message: error instanceof Error ? error.message : String(error) } };
  }
}

async function queueInfos(tasks: TaskQueue): Promise<TaskQueueInfo[]> {
  const names = (await tasks.queues()).slice(0, MAX_FRAME_QUEUES);
  return Promise.all(names.map((name) => tasks.queueInfo(name)));
}

export function walk(node: TreeNode, visit: (node: TreeNode) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

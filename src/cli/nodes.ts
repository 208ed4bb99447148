import type { NodesReport } from '../admin/nodes-view.js';

/** `molo nodes`: one line per node: name, state, round-trip time, queued bytes, since when. */
export function formatNodes(report: NodesReport): string {
  const rows = report.nodes.map((entry) => [
    entry.name,
    entry.state === 'down' && entry.downReason !== null ? `down (${entry.downReason})` : entry.state,
    entry.rttMs === null ? '-' : `${entry.rttMs.toFixed(2)} ms`,
    String(entry.queuedBytes),
    entry.upAt === null ? '-' : new Date(entry.upAt).toISOString(),
  ]);
  const header = ['NODE', 'STATE', 'RTT', 'QUEUED BYTES', 'UP SINCE'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** The admin path of a tree: this node's, or another node's through the cluster (`--node`). */
export function treePath(node: string | undefined): string {
  return node === undefined ? '/tree' : `/nodes/${encodeURIComponent(node)}/tree`;
}

export function isNodesReport(value: unknown): value is NodesReport {
  return typeof value === 'object' && value !== null && Array.isArray((value as { nodes?: unknown }).nodes);
}

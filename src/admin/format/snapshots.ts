import type { HealthReport } from '../admin-actor.js';
import type { ProcessSnapshot } from '../process-snapshot.js';
import type { TreeNode, TreeSnapshot } from '../tree-snapshot.js';

/**
 * Human-readable renderings of admin snapshots. One line per process; the tree is drawn with
 * box-drawing guides, children in start order.
 */
export function formatTree(snapshot: TreeSnapshot): string {
  const lines = [`node ${snapshot.node}  (snapshot ${snapshot.takenAt})`];
  if (snapshot.root === null) {
    lines.push('no root supervisor attached yet');
  } else {
    lines.push(describeNode(snapshot.root));
    pushDetails(lines, snapshot.root, '');
    pushChildren(lines, snapshot.root, '', snapshot.truncated);
  }
  for (const [section, entries] of Object.entries(snapshot.sections)) {
    if (entries.length === 0) continue;
    lines.push('', `${section}:`);
    for (const entry of entries) {
      if (entry.error !== undefined) {
        lines.push(`  ${entry.path}  ${entry.ref}  ! ${entry.error.code}: ${entry.error.message}`);
        continue;
      }
      const programs = programLines(entry.value);
      if (programs === undefined) {
        lines.push(`  ${entry.path}  ${entry.ref}  ${compactJson(entry.value)}`);
      } else {
        lines.push(`  ${entry.path}  ${entry.ref}`, ...programs.map((line) => `    ${line}`));
      }
    }
  }
  if (snapshot.truncated) {
    lines.push('', `truncated at ${snapshot.maxBytes} bytes: ${snapshot.omitted} children omitted (use --json for what was kept)`);
  }
  if (snapshot.errors > 0) lines.push(`${snapshot.errors} part(s) of the tree could not be read (marked !)`);
  return `${lines.join('\n')}\n`;
}

function pushChildren(lines: string[], node: TreeNode, indent: string, truncated: boolean): void {
  const children = node.children ?? [];
  const tail: string[] = [];
  if (node.childrenOmitted !== undefined && node.childrenOmitted > 0) tail.push(`… ${node.childrenOmitted} more children (snapshot cap)`);
  else if (node.type === 'supervisor' && node.children === undefined && node.process !== null && node.error === undefined && node.section === undefined && truncated) {
    tail.push('… not walked (snapshot cap)');
  }
  const count = children.length + tail.length;
  children.forEach((child, index) => {
    const last = index === count - 1;
    lines.push(`${indent}${last ? '└─ ' : '├─ '}${describeNode(child)}`);
    const childIndent = `${indent}${last ? '   ' : '│  '}`;
    pushDetails(lines, child, childIndent);
    pushChildren(lines, child, childIndent, truncated);
  });
  tail.forEach((text, index) => lines.push(`${indent}${children.length + index === count - 1 ? '└─ ' : '├─ '}${text}`));
}

function pushDetails(lines: string[], node: TreeNode, indent: string): void {
  if (node.error !== undefined) lines.push(`${indent}   ! ${node.error.code}: ${node.error.message}`);
}

function describeNode(node: TreeNode): string {
  const label = node.id ?? node.process?.name ?? node.ref ?? '?';
  const kind = [node.type, node.process?.behaviour, node.supervisor?.strategy].filter((part) => part !== undefined).join(' ');
  const parts = [`${label} (${kind})`, node.state];
  if (node.path !== 'root') parts.push(`restarts ${node.restartCount}`);
  if (node.supervisor !== undefined) {
    parts.push(`intensity left ${node.supervisor.remainingIntensity}/${node.supervisor.intensity} per ${node.supervisor.periodMs} ms`);
  }
  if (node.process !== null) {
    parts.push(`mailbox ${node.process.mailboxLength}/${node.process.mailboxCapacity}`);
    if (node.process.name !== null && node.process.name !== label) parts.push(`name ${node.process.name}`);
  }
  if (node.section !== undefined) parts.push(`[${node.section}]`);
  if (node.ref !== null && node.ref !== label) parts.push(node.ref);
  return parts.join('  ');
}

export function formatProcesses(snapshot: ProcessSnapshot): string {
  const header = ['REF', 'NAME', 'BEHAVIOUR', 'STATUS', 'MAILBOX', 'HANDLED', 'DROPPED', 'LINKS', 'MONITORS', 'PARENT'];
  const rows = snapshot.processes.map((entry) => [
    entry.ref,
    entry.name ?? '-',
    entry.behaviour,
    entry.status,
    `${entry.mailboxLength}/${entry.mailboxCapacity}`,
    String(entry.messagesHandled),
    String(entry.messagesDropped),
    String(entry.links),
    String(entry.monitors),
    entry.parent ?? '-',
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const render = (row: readonly string[]): string =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  const lines = [`node ${snapshot.node}  (snapshot ${snapshot.takenAt})`, render(header), ...rows.map(render)];
  lines.push(
    snapshot.truncated
      ? `showing ${snapshot.processes.length} of ${snapshot.total} processes (truncated at ${snapshot.maxBytes} bytes)`
      : `${snapshot.total} process${snapshot.total === 1 ? '' : 'es'}`,
  );
  return `${lines.join('\n')}\n`;
}

export function formatHealth(report: HealthReport): string {
  const root = report.root === null ? 'no root' : `root ${report.root} ${report.rootAlive ? 'alive' : 'down'}`;
  const problems = (report.problems ?? []).map((entry) => `  ${entry.check}: ${entry.problem}\n`).join('');
  return `${report.status}  node ${report.node}  ${root}  actors ${report.actors}  uptime ${(report.uptimeMs / 1000).toFixed(1)} s\n${problems}`;
}

/**
 * One line per program when the value looks like the program supervisor's status (programs with
 * state, pid, health and restarts); undefined for anything else, which is printed as JSON.
 */
function programLines(value: unknown): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const programs = (value as { programs?: unknown }).programs;
  if (!Array.isArray(programs)) return undefined;
  const lines: string[] = [];
  for (const program of programs as unknown[]) {
    if (program === null || typeof program !== 'object') return undefined;
    const fields = program as Record<string, unknown>;
    if (typeof fields['name'] !== 'string' || typeof fields['state'] !== 'string') return undefined;
    const parts = [fields['name'], fields['state']];
    if (typeof fields['pid'] === 'number') parts.push(`pid ${fields['pid']}`);
    if (typeof fields['health'] === 'string') parts.push(`health ${fields['health']}`);
    if (typeof fields['restartsInWindow'] === 'number' && typeof fields['maxRestarts'] === 'number') {
      parts.push(`restarts ${fields['restartsInWindow']}/${fields['maxRestarts']} in window`);
    }
    if (typeof fields['totalRestarts'] === 'number') parts.push(`total ${fields['totalRestarts']}`);
    lines.push(parts.join('  '));
  }
  return lines.length === 0 ? ['(no programs)'] : lines;
}

function compactJson(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

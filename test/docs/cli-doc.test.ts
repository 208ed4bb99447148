/**
 * docs/admin.md's `molo` listing names only commands the CLI has: each `molo GROUP SUB | SUB …`
 * line's subcommands are in that group's usage text, and each group's usage subcommands are listed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATE_USAGE } from '../../src/cli/migrate.js';
import { PROGRAMS_USAGE, SUP_USAGE } from '../../src/cli/ops.js';
import { USAGE } from '../../src/cli/run.js';
import { STREAMS_USAGE } from '../../src/cli/streams.js';
import { TASKS_USAGE } from '../../src/cli/tasks.js';
import { projectRoot } from '../support/run-script.js';

/** Each group's usage text: its subcommands are the first words of its indented lines. */
const GROUPS: Record<string, string> = { migrate: MIGRATE_USAGE, tasks: TASKS_USAGE, streams: STREAMS_USAGE, consumers: STREAMS_USAGE, sup: SUP_USAGE, programs: PROGRAMS_USAGE };
const TOP = ['tree', 'ps', 'nodes', 'health', 'help', '--version', ...Object.keys(GROUPS)];

/** The subcommands of a listing line: `purge STREAM`, `restart | terminate PATH`, `ls | info STREAM | view STREAM`. */
function subcommands(rest: string): string[] {
  return rest
    .split(/\s{2,}/)[0]!
    .split('|')
    .map((part) => part.trim().split(/\s+/)[0]!)
    .filter((word) => /^[a-z][a-z-]*$/.test(word));
}

function listing(): string[] {
  const text = readFileSync(join(projectRoot, 'docs/admin.md'), 'utf8');
  const section = text.slice(text.indexOf('## `molo`, the command line'));
  const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4));
  return block.split('\n').filter((line) => line.startsWith('molo '));
}

describe('docs/admin.md lists the molo commands', () => {
  const lines = listing();

  it('finds the listing', () => {
    expect(lines.length).toBeGreaterThan(15);
  });

  it('every group and subcommand it lists is one the CLI has', () => {
    const missing: string[] = [];
    for (const line of lines) {
      const [, group, rest = ''] = /^molo (\S+)\s*(.*)$/.exec(line)!;
      if (!TOP.includes(group!)) missing.push(line);
      const usage = GROUPS[group!];
      if (usage === undefined) continue;
      for (const sub of subcommands(rest)) if (!new RegExp(`(^|[\\s|<])${sub}([\\s|>]|$)`, 'm').test(usage)) missing.push(`${group} ${sub}`);
    }
    expect(missing).toEqual([]);
    // The top-level usage names every group.
    for (const group of Object.keys(GROUPS)) expect(USAGE).toContain(`  ${group} `);
  });

  it('every subcommand of the streams, consumers, sup and programs usages is listed', () => {
    const listed = new Set(lines.flatMap((line) => {
      const [, group, rest = ''] = /^molo (\S+)\s*(.*)$/.exec(line)!;
      return subcommands(rest).map((sub) => `${group} ${sub}`);
    }));
    for (const wanted of ['streams ls', 'streams info', 'streams view', 'streams purge', 'consumers info', 'consumers reset', 'sup restart', 'sup terminate', 'sup scale', 'programs status', 'programs start', 'programs stop', 'programs restart', 'programs logs']) {
      expect(listed).toContain(wanted);
    }
  });
});

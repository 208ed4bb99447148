import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../support/run-script.js';
import { survivors } from './helpers.js';

/** Every live process whose process group is one of `groups` (a program and what it started). */
function membersOf(groups: readonly number[]): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the command: state, ppid, pgrp.
      if (groups.includes(Number(fields[2]))) members.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return members;
}

describe('programs do not outlive their node', () => {
  it('a node that is SIGKILLed leaves none of its seven programs, nor their children, behind', { timeout: 60_000 }, async () => {
    const node = spawn(process.execPath, ['--import', 'tsx', 'test/behaviours/programs/fixtures/programs-then-wait.ts'], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => node.once('exit', resolve));
    let output = '';
    const pids = await new Promise<number[]>((resolve, reject) => {
      node.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const line = output.split('\n').find((candidate) => candidate.startsWith('['));
        if (line !== undefined && output.includes('\n')) resolve(JSON.parse(line) as number[]);
      });
      node.once('exit', (code, signal) => reject(new Error(`the node exited first (${code ?? signal}): ${output}`)));
    });
    expect(pids).toHaveLength(7);
    const members = membersOf(pids);
    // The programs and the children three of them started.
    expect(members.length).toBeGreaterThanOrEqual(10);
    node.kill('SIGKILL');
    await exited;
    // Before the watchdog: 6 of 7 programs were left, reparented to init.
    expect(await survivors(members, 5_000)).toEqual([]);
  });
});

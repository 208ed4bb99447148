/**
 * examples/cluster/main.ts: three nodes as OS processes; the scenario's lines in order; then a
 * Ctrl-C (SIGINT to the process group, as a terminal sends it) stops every node: exit 0, no orphans.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot, TS_NODE_ARGS } from '../support/run-script.js';

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

function runCluster(): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TS_NODE_ARGS, 'examples/cluster/main.ts'], { cwd: projectRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let sent = false;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!sent && output.includes('Ctrl-C stops it')) {
        sent = true;
        setTimeout(() => process.kill(-child.pid!, 'SIGINT'), 200);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const guard = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`no exit within 55 s; output: ${output.slice(-3_000)}`));
    }, 55_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, output });
    });
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('examples/cluster', () => {
  it('runs the scenario across three OS processes and stops cleanly on Ctrl-C', async () => {
    const { code, signal, output } = await runCluster();
    const lines = [
      /node a@127\.0\.0\.1:\d+ up/,
      /\[a\] remote call to a worker on b@127\.0\.0\.1:\d+: square\(7\) = 49/,
      /\[a\] supervisor on a@\S+ supervises a worker on b@/,
      /killing node b@\S+ \(pid \d+\) with SIGKILL/,
      /\[a\] the supervisor restarted the worker on c@127\.0\.0\.1:\d+/,
      /the cluster-wide publish was seen on a and c/,
      /\$ molo nodes/,
      /\$ molo tree --node a@/,
      /cluster running \(a, c\); Ctrl-C stops it/,
      /all nodes stopped/,
    ];
    let at = 0;
    for (const line of lines) {
      const match = line.exec(output.slice(at));
      expect(match, `${String(line)} after offset ${at} in:\n${output}`).not.toBeNull();
      at += match!.index + match![0].length;
    }
    expect(output).toMatch(/\[a\] monitor: the worker on b@\S+ went down: noconnection/);
    expect(output).toMatch(/\[a\] news: hello from a@/);
    expect(output).toMatch(/\[c\] news: hello from a@/);
    expect(output).not.toMatch(/\[b\] news/);
    // molo nodes: a itself, c up with a round-trip time, b down.
    expect(output).toMatch(/^a@127\.0\.0\.1:\d+\s+self/m);
    expect(output).toMatch(/^c@127\.0\.0\.1:\d+\s+up\s+\d+\.\d+ ms/m);
    expect(output).toMatch(/^b@127\.0\.0\.1:\d+\s+down/m);
    // The tree of a, read from c: the supervisor and its worker, now on c.
    expect(output).toMatch(/└─ worker \(worker\)\s+running\s+restarts 1\s+<c@/);
    expect([code, signal]).toEqual([0, null]);
    const pids = [...output.matchAll(/up \(pid (\d+)\)/g)].map((match) => Number(match[1]));
    expect(pids).toHaveLength(3);
    expect(pids.filter(alive)).toEqual([]);
  }, 60_000);
});

/**
 * Program restart latency (V7-1 asks for under 2 s): from SIGKILL of a supervised program to its
 * new process running, seen as the first line the new process prints, at the lowest backoff
 * (initialMs 0: restart at once). The figure covers the exit notice, the supervisor's decision,
 * fork/exec and the program's own startup (most of it for a Node.js program).
 *
 * Standalone: npx tsx bench/programs/restart-latency.ts
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ActorSystem } from '../../src/actors/index.js';
import { ProgramSupervisor, type ProgramLogger } from '../../src/behaviours/programs/index.js';

export interface RestartLatencyOptions {
  /** Default 20. */
  readonly samples?: number;
  /** `node` (default): a Node.js program; `sh`: /bin/sh running `echo`, to see the supervisor's own share. */
  readonly program?: 'node' | 'sh';
}

export interface RestartLatencyResult {
  readonly mean_ms: number;
  readonly p99_ms: number;
}

const PROGRAMS = {
  node: { command: process.execPath, args: ['-e', 'console.log("up " + process.pid); setInterval(() => {}, 60_000);'] },
  sh: { command: '/bin/sh', args: ['-c', 'echo "up $$"; exec sleep 600'] },
} as const;

export async function restartLatency(options: RestartLatencyOptions = {}): Promise<RestartLatencyResult> {
  const samples = options.samples ?? 20;
  const { command, args } = PROGRAMS[options.program ?? 'node'];
  let onUp: ((pid: number) => void) | undefined;
  const quiet = (): void => {};
  const logger: ProgramLogger = {
    info: (_fields, message) => {
      if (message?.startsWith('up ')) onUp?.(Number(message.slice(3)));
    },
    warn: quiet,
    error: quiet,
  };
  const nextUp = (): Promise<number> => new Promise((resolve) => (onUp = resolve));
  const system = new ActorSystem({ node: 'bench' });
  let up = nextUp();
  const sup = await ProgramSupervisor.start(system, {
    logger,
    programs: [{ name: 'bench', command, args, restart: 'always', maxRestarts: samples + 5, backoff: { initialMs: 0, maxMs: 0 } }],
  });
  const latencies: number[] = [];
  try {
    let pid = await up;
    for (let i = 0; i < samples; i++) {
      up = nextUp();
      const started = performance.now();
      process.kill(pid, 'SIGKILL');
      pid = await up;
      latencies.push(performance.now() - started);
    }
  } finally {
    await ProgramSupervisor.stop(system, sup);
  }
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
  const p99 = latencies[Math.min(latencies.length - 1, Math.ceil(0.99 * latencies.length) - 1)]!;
  return { mean_ms: round(mean), p99_ms: round(p99) };
}

const round = (value: number): number => Math.round(value * 100) / 100;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const program of ['node', 'sh'] as const) {
    const result = await restartLatency({ program });
    console.log(`programs restart-latency (${program} program, SIGKILL -> running, n=20, backoff 0): mean ${result.mean_ms} ms, p99 ${result.p99_ms} ms`);
  }
}

/**
 * Telemetry overhead on the hot paths: `npx tsx bench/telemetry/overhead.ts [--rounds N]`.
 *
 * Two cases, each run with telemetry off (no observer, no logger) and on (the `Telemetry` object as
 * observer and logger: pino at `info`, metrics on, tracing on with no OpenTelemetry SDK registered):
 * - send: 1,000,000 messages to one actor, from outside, until the last is handled;
 * - call: 100,000 sequential GenServer round trips.
 * Rounds rotate off/on/control (off again, to show the noise floor) in one process after a warm-up. Each round is timed twice: wall
 * clock, and this process's CPU time (`process.cpuUsage`, user + system), which other load on a
 * busy machine disturbs far less; the work is all on the main thread, so the two agree on an idle
 * machine. The fastest round of each mode is compared (load only ever slows a round down), and
 * medians are printed too. Target: on within 5% of off.
 */
import { pathToFileURL } from 'node:url';
import { ActorSystem, type ActorSystemOptions } from '../../src/actors/index.js';
import { GenServer } from '../../src/behaviours/index.js';
import { createTelemetry } from '../../src/telemetry/index.js';

const SEND_MESSAGES = 1_000_000;
const CALLS = 100_000;

class Echo extends GenServer<number, number> {
  override handleCall(request: number): number {
    return request;
  }
}

/** `control` is `off` again: the spread between the two is the noise floor of this machine right now. */
export type Mode = 'off' | 'on' | 'control';
const MODES: readonly Mode[] = ['off', 'on', 'control'];

// One telemetry for every round, as an application has one; each round makes its own system. Made on
// first use: its logger opens /dev/null asynchronously, and a process that exits before that (the
// runner's --help) would have pino throw while flushing at exit.
let telemetry: ReturnType<typeof createTelemetry> | undefined;

function systemOptions(mode: Mode): ActorSystemOptions {
  return mode === 'on' ? (telemetry ??= createTelemetry({ logger: { level: 'info', destination: '/dev/null' }, metrics: true, tracing: true })).systemOptions : {};
}

/** Milliseconds of wall clock and of CPU time. */
export interface Timing {
  readonly wall: number;
  readonly cpu: number;
}

function startTiming(): () => Timing {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1_000 };
  };
}

async function sendCase(mode: Mode): Promise<Timing> {
  const system = new ActorSystem(systemOptions(mode));
  let handled = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const ref = system.spawn({ handle: () => void (++handled === SEND_MESSAGES && finish()) }, { mailbox: { capacity: SEND_MESSAGES } });
  const stop = startTiming();
  for (let i = 0; i < SEND_MESSAGES; i++) system.send(ref, i);
  await done;
  const timing = stop();
  system.shutdown();
  return timing;
}

async function callCase(mode: Mode): Promise<Timing> {
  const system = new ActorSystem(systemOptions(mode));
  const server = await GenServer.start(system, () => new Echo());
  const stop = startTiming();
  let sum = 0;
  for (let i = 0; i < CALLS; i++) sum += await GenServer.call(system, server, i);
  const timing = stop();
  if (sum !== (CALLS * (CALLS - 1)) / 2) throw new Error('wrong replies');
  system.shutdown();
  return timing;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export interface OverheadResult {
  readonly case: 'send' | 'call';
  readonly count: number;
  /** Fastest round of each mode, CPU and wall milliseconds. */
  readonly best: Record<Mode, Timing>;
  readonly median: Record<Mode, Timing>;
}

async function measure(name: 'send' | 'call', count: number, run: (mode: Mode) => Promise<Timing>, rounds: number): Promise<OverheadResult> {
  for (const mode of MODES) await run(mode);
  const times: Record<Mode, Timing[]> = { off: [], on: [], control: [] };
  for (let round = 0; round < rounds; round++) {
    // Rotate which goes first, so drift (GC, thermal, other load) hits every mode alike.
    for (let i = 0; i < MODES.length; i++) {
      const mode = MODES[(round + i) % MODES.length]!;
      times[mode].push(await run(mode));
    }
  }
  const pick = (mode: Mode, choose: (values: number[]) => number): Timing => ({
    cpu: choose(times[mode].map((timing) => timing.cpu)),
    wall: choose(times[mode].map((timing) => timing.wall)),
  });
  const best = { off: pick('off', (v) => Math.min(...v)), on: pick('on', (v) => Math.min(...v)), control: pick('control', (v) => Math.min(...v)) };
  const middle = { off: pick('off', median), on: pick('on', median), control: pick('control', median) };
  return { case: name, count, best, median: middle };
}

export function describeOverhead(result: OverheadResult): string[] {
  const rate = (ms: number): string => `${Math.round((result.count / ms) * 1_000).toLocaleString('en-US')}/s`;
  return (['cpu', 'wall'] as const).map((clock) => {
    const best = result.best;
    const ratio = best.on[clock] / best.off[clock];
    const verdict = ratio <= 1.05 ? 'within 5%' : 'OVER 5%';
    return (
      `${result.case.padEnd(5)} ${clock.padEnd(4)} best: off ${best.off[clock].toFixed(1).padStart(7)} ms (${rate(best.off[clock]).padStart(12)})  ` +
      `on ${best.on[clock].toFixed(1).padStart(7)} ms (${rate(best.on[clock]).padStart(12)})  on/off ${ratio.toFixed(3)} ${verdict}  |  ` +
      `median on/off ${(result.median.on[clock] / result.median.off[clock]).toFixed(3)}  ` +
      `noise (control/off): best ${(best.control[clock] / best.off[clock]).toFixed(3)}, median ${(result.median.control[clock] / result.median.off[clock]).toFixed(3)}`
    );
  });
}

/** Both cases, `rounds` alternating rounds each. */
export async function measureOverhead(rounds: number): Promise<OverheadResult[]> {
  return [await measure('send', SEND_MESSAGES, sendCase, rounds), await measure('call', CALLS, callCase, rounds)];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const index = process.argv.indexOf('--rounds');
  const rounds = index >= 0 ? Number(process.argv[index + 1]) : 7;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds needs a positive integer');
  console.log(`telemetry overhead, Node ${process.version}, ${rounds} alternating rounds per mode`);
  console.log('on = createTelemetry({ logger: { level: "info" }, metrics: true, tracing: true }), no OpenTelemetry SDK registered');
  for (const result of await measureOverhead(rounds)) for (const line of describeOverhead(result)) console.log(line);
}

/**
 * The scheduler's Prometheus metrics. A scheduler counts in plain numbers as it goes; the metrics
 * read them at scrape time (as the streams' do), so a scheduler without a registry pays nothing.
 *
 * Labelled by `scheduler` (its name): `molo_scheduler_fires_total` (runs enqueued),
 * `molo_scheduler_skipped_total` (due fires not run: missed under `skip`, or folded into the one
 * run of `run-once`), `molo_scheduler_refused_total` (fires refused by the fencing check: this
 * scheduler had been deposed), `molo_scheduler_fire_failures_total` (fires that failed otherwise:
 * an unknown or full queue, a database error) and the gauge `molo_scheduler_leader` (1 while this
 * scheduler leads and fires).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface SchedulerCounts {
  fires: number;
  skipped: number;
  refused: number;
  failures: number;
  /** 1 while leading (elected and fenced in), else 0. */
  leader: number;
}

export const emptySchedulerCounts = (): SchedulerCounts => ({ fires: 0, skipped: 0, refused: 0, failures: 0, leader: 0 });

type Counted = Exclude<keyof SchedulerCounts, 'leader'>;
const COUNTERS: readonly [Counted, string, string][] = [
  ['fires', 'scheduler_fires_total', 'Scheduled runs enqueued.'],
  ['skipped', 'scheduler_skipped_total', 'Due fires not run (missed under skip, or folded into one run by run-once).'],
  ['refused', 'scheduler_refused_total', 'Fires refused by the fencing check: the scheduler had been deposed.'],
  ['failures', 'scheduler_fire_failures_total', 'Fires that failed for another reason (unknown or full queue, database error).'],
];

export class SchedulerMetrics {
  readonly #schedulers = new Map<string, Readonly<SchedulerCounts>>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const schedulers = this.#schedulers;
    for (const [count, name, help] of COUNTERS) {
      new Counter({
        name: `${prefix}${name}`,
        help,
        labelNames: ['scheduler'],
        registers,
        collect() {
          this.reset();
          for (const [scheduler, counts] of schedulers) this.inc({ scheduler }, counts[count]);
        },
      });
    }
    new Gauge({
      name: `${prefix}scheduler_leader`,
      help: '1 while this scheduler leads (elected and fenced in) and fires, else 0.',
      labelNames: ['scheduler'],
      registers,
      collect() {
        this.reset();
        for (const [scheduler, counts] of schedulers) this.set({ scheduler }, counts.leader);
      },
    });
  }

  add(name: string, counts: Readonly<SchedulerCounts>): void {
    this.#schedulers.set(name, counts);
  }

  remove(name: string, counts: Readonly<SchedulerCounts>): void {
    if (this.#schedulers.get(name) === counts) this.#schedulers.delete(name);
  }
}

const byRegistry = new WeakMap<Registry, SchedulerMetrics>();

/** The scheduler metrics of `registry`, created on first use; undefined without a registry. */
export function schedulerMetrics(registry: Registry | undefined): SchedulerMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new SchedulerMetrics(registry)));
  return metrics;
}

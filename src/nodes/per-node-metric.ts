/**
 * One metric labelled by `node`, filled at scrape time from `rows()`: the nodes' and the cluster
 * services' metrics are all of this shape, as counters or gauges.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function perNodeMetric(Kind: typeof Gauge | typeof Counter, registers: Registry[], name: string, help: string, rows: () => Iterable<readonly [node: string, value: number]>): void {
  new Kind({
    name,
    help,
    labelNames: ['node'],
    registers,
    collect() {
      this.reset();
      // After reset, inc sets a gauge's value and a counter's total alike.
      for (const [node, value] of rows()) (this as Gauge).inc({ node }, value);
    },
  });
}

/**
 * The rooms' Prometheus metrics, read from each instance's plain counters at scrape time (so rooms
 * without a registry pay nothing). Labelled by `instance`: `molo_rooms_sockets`,
 * `molo_rooms_rooms` (rooms with a local bridge), `molo_rooms_queued_frames` (frames waiting for
 * slow sockets), and `molo_rooms_events_total{event}` (accepted, refused, published, sent, dropped,
 * closedSlow, forgedSeq, forbidden, capRefusals, gaps).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RoomsHub } from './hub.js';

export class RoomsMetrics {
  readonly #hubs = new Set<RoomsHub>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const hubs = this.#hubs;
    const gauges: [string, string, (hub: RoomsHub) => number][] = [
      ['rooms_sockets', 'Open client sockets (WebSocket and SSE) on the instance.', (hub) => hub.conns.size],
      ['rooms_rooms', 'Rooms with at least one local socket (each with its bridge).', (hub) => hub.rooms.size],
      ['rooms_queued_frames', 'Frames queued for slow sockets, summed over the instance.', (hub) => [...hub.conns.values()].reduce((sum, conn) => sum + conn.queued, 0)],
    ];
    for (const [name, help, read] of gauges) {
      new Gauge({
        name: `${prefix}${name}`,
        help,
        labelNames: ['instance'],
        registers,
        collect() {
          this.reset();
          for (const hub of hubs) this.set({ instance: hub.config.instance }, read(hub));
        },
      });
    }
    new Counter({
      name: `${prefix}rooms_events_total`,
      help: 'Rooms events by kind: sockets accepted and refused, broadcasts published, frames sent and dropped, slow sockets closed, forged seqs, forbidden joins, cap refusals, gaps reported.',
      labelNames: ['instance', 'event'],
      registers,
      collect() {
        this.reset();
        for (const hub of hubs) for (const [event, count] of Object.entries(hub.counters)) this.inc({ instance: hub.config.instance, event }, count);
      },
    });
  }

  add(hub: RoomsHub): void {
    this.#hubs.add(hub);
  }

  remove(hub: RoomsHub): void {
    this.#hubs.delete(hub);
  }
}

const byRegistry = new WeakMap<Registry, RoomsMetrics>();

/** The rooms metrics of `registry`, created on first use; undefined without a registry. */
export function roomsMetrics(registry: Registry | undefined): RoomsMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new RoomsMetrics(registry)));
  return metrics;
}

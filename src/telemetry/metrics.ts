import type { Counter, Gauge, Registry } from 'prom-client';
import { prom } from './lazy-modules.js';
import { classifyExit, EXIT_CLASSES, type ExitClass, type TelemetryActor } from './actor-shape.js';

export interface MetricsOptions {
  /** The registry to add Molo's metrics to; default a new one of its own, never prom-client's global. */
  readonly registry?: Registry;
  /** Prefix of every metric name; default `molo_`. */
  readonly prefix?: string;
  /**
   * Also collect prom-client's Node process metrics (`process_cpu_seconds_total`,
   * `nodejs_eventloop_lag_seconds`, `nodejs_heap_size_used_bytes`, …) into the same registry; default off.
   */
  readonly processMetrics?: boolean;
  /** Registered name of the root supervisor, for `molo_root_supervisor_up`; default `root` (startNode's). */
  readonly rootName?: string;
}

/** The root supervisor's name when startNode is not told otherwise (its `ROOT_NAME`; telemetry cannot import admin). */
export const DEFAULT_ROOT_NAME = 'root';

/** Help texts of the metrics startNode's built-in `/metrics` also serves, so both shapes read alike. */
export const METRIC_HELP = {
  actorsAlive: 'Live actors, by behaviour (sampled at scrape).',
  rootSupervisorUp: '1 while the root supervisor is alive, else 0 (sampled at scrape).',
  mailboxMessages: 'Messages queued in live actors’ mailboxes, by behaviour (sampled at scrape).',
  mailboxDepthMax: 'The deepest live mailbox, by behaviour (sampled at scrape).',
} as const;

/** What one scrape samples from the live actors, per behaviour. */
interface BehaviourSample {
  alive: number;
  queued: number;
  deepest: number;
}

interface Sample {
  readonly byBehaviour: Map<string, BehaviourSample>;
  rootUp: boolean;
  handled: number;
  dropped: number;
}

/**
 * The runtime's Prometheus metrics, in a registry of their own.
 *
 * Updated as events happen: `molo_actors_spawned_total`, `molo_actor_exits_total{reason}` (by
 * {@link ExitClass}), `molo_supervisor_restarts_total{supervisor,child}` and
 * `molo_supervisor_events_total{event}`.
 *
 * Sampled at scrape time from the live actors' process info (nothing is counted per message):
 * `molo_actors_alive{behaviour}`, `molo_root_supervisor_up`, the mailbox gauges `molo_mailbox_messages{behaviour}` (messages
 * queued) and `molo_mailbox_depth_max{behaviour}` (the deepest mailbox), and the counters
 * `molo_messages_handled_total` and `molo_messages_dropped_total` (live actors' counts plus those of
 * actors that have exited). Mailbox depth is a sampled gauge rather than a histogram: a histogram
 * would have to observe every enqueue, which costs on the hot path.
 *
 * The price: one Set entry per live actor, and a scrape that walks them all.
 */
export class RuntimeMetrics {
  readonly registry: Registry;
  readonly #live = new Set<TelemetryActor>();
  #handledByExited = 0;
  #droppedByExited = 0;
  /** The current scrape's sample, shared by every sampled metric; dropped after the scrape's tick. */
  #sample: Sample | undefined = undefined;
  readonly #rootName: string;
  readonly #spawned: Counter;
  readonly #exits: Record<ExitClass, Counter.Internal>;
  readonly #restarts: Counter<'supervisor' | 'child'>;
  readonly #supervisorEvents: Counter<'event'>;

  constructor(options: MetricsOptions = {}) {
    const registry = (this.registry = options.registry ?? new prom.Registry());
    const prefix = options.prefix ?? 'molo_';
    const registers = [registry];
    const metrics = this;
    this.#rootName = options.rootName ?? DEFAULT_ROOT_NAME;
    if (options.processMetrics === true) prom.collectDefaultMetrics({ register: registry });

    new prom.Gauge({
      name: `${prefix}actors_alive`,
      help: METRIC_HELP.actorsAlive,
      labelNames: ['behaviour'],
      registers,
      collect() {
        this.reset();
        for (const [behaviour, sample] of metrics.#sampled().byBehaviour) this.set({ behaviour }, sample.alive);
      },
    });
    new prom.Gauge({
      name: `${prefix}root_supervisor_up`,
      help: METRIC_HELP.rootSupervisorUp,
      registers,
      collect() {
        this.set(metrics.#sampled().rootUp ? 1 : 0);
      },
    });
    this.#spawned = new prom.Counter({ name: `${prefix}actors_spawned_total`, help: 'Actors spawned.', registers });
    const exits = new prom.Counter({
      name: `${prefix}actor_exits_total`,
      help: 'Actor exits, by reason class (normal, shutdown, killed, noproc, noconnection, error).',
      labelNames: ['reason'],
      registers,
    });
    // Every class is exported from the start (at 0), so a rate over it never starts from nothing.
    for (const reason of EXIT_CLASSES) exits.inc({ reason }, 0);
    this.#exits = Object.fromEntries(EXIT_CLASSES.map((reason) => [reason, exits.labels(reason)])) as Record<
      ExitClass,
      Counter.Internal
    >;
    new prom.Gauge({
      name: `${prefix}mailbox_messages`,
      help: METRIC_HELP.mailboxMessages,
      labelNames: ['behaviour'],
      registers,
      collect() {
        this.reset();
        for (const [behaviour, sample] of metrics.#sampled().byBehaviour) this.set({ behaviour }, sample.queued);
      },
    });
    new prom.Gauge({
      name: `${prefix}mailbox_depth_max`,
      help: METRIC_HELP.mailboxDepthMax,
      labelNames: ['behaviour'],
      registers,
      collect() {
        this.reset();
        for (const [behaviour, sample] of metrics.#sampled().byBehaviour) this.set({ behaviour }, sample.deepest);
      },
    });
    new prom.Counter({
      name: `${prefix}messages_handled_total`,
      help: 'Messages handled by actors, live and exited (collected at scrape).',
      registers,
      collect() {
        this.reset();
        this.inc(metrics.#sampled().handled);
      },
    });
    new prom.Counter({
      name: `${prefix}messages_dropped_total`,
      help: 'Messages dropped by mailbox overflow policies, live and exited actors (collected at scrape).',
      registers,
      collect() {
        this.reset();
        this.inc(metrics.#sampled().dropped);
      },
    });
    this.#restarts = new prom.Counter({
      name: `${prefix}supervisor_restarts_total`,
      help: 'Children restarted, by supervisor (its name, else its ref) and child id.',
      labelNames: ['supervisor', 'child'],
      registers,
    });
    this.#supervisorEvents = new prom.Counter({
      name: `${prefix}supervisor_events_total`,
      help: 'Supervisor reports, by event (child_terminated, child_restarted, start_error, shutdown).',
      labelNames: ['event'],
      registers,
    });
  }

  actorSpawned(actor: TelemetryActor): void {
    this.#live.add(actor);
    this.#spawned.inc();
  }

  actorExited(actor: TelemetryActor, reason: unknown): void {
    if (this.#live.delete(actor)) {
      const info = actor.info();
      this.#handledByExited += info.messagesHandled;
      this.#droppedByExited += info.messagesDropped;
    }
    this.#exits[classifyExit(reason)].inc();
  }

  /** A supervisor report (see the kernel observer's `report`). */
  supervisorEvent(event: string, fields: Readonly<Record<string, unknown>>): void {
    this.#supervisorEvents.inc({ event: event.startsWith('supervisor.') ? event.slice('supervisor.'.length) : event });
    if (event === 'supervisor.child_restarted') {
      const supervisor = String(fields.supervisorName ?? fields.supervisor);
      // A dynamic child's id is its ref, new at every restart: label it by its spec instead.
      const child = String(fields.childSpecId ?? fields.childId);
      this.#restarts.inc({ supervisor, child });
    }
  }

  /** The registry in Prometheus text format (what `/metrics` serves, with {@link contentType}); bound. */
  readonly metricsText = (): Promise<string> => this.registry.metrics();

  get contentType(): string {
    return this.registry.contentType;
  }

  #sampled(): Sample {
    if (this.#sample !== undefined) return this.#sample;
    const sample: Sample = { byBehaviour: new Map(), rootUp: false, handled: this.#handledByExited, dropped: this.#droppedByExited };
    for (const actor of this.#live) {
      if (actor.name === this.#rootName) sample.rootUp = true;
      const info = actor.info();
      let entry = sample.byBehaviour.get(info.behaviour);
      if (entry === undefined) sample.byBehaviour.set(info.behaviour, (entry = { alive: 0, queued: 0, deepest: 0 }));
      entry.alive++;
      entry.queued += info.mailboxLength;
      if (info.mailboxLength > entry.deepest) entry.deepest = info.mailboxLength;
      sample.handled += info.messagesHandled;
      sample.dropped += info.messagesDropped;
    }
    // Every metric of one scrape collects in the same tick; the next scrape samples afresh.
    this.#sample = sample;
    queueMicrotask(() => (this.#sample = undefined));
    return sample;
  }
}

/**
 * StreamConsumer: a durable consumer as a supervised actor. It polls the store (`fetch` with a
 * wait, so it sleeps until a publish wakes it), hands each delivery to the handler with an
 * AbortSignal, acks when the handler resolves and naks with exponential backoff when it throws or
 * outlasts its timeout. The poll loop runs beside the server's mailbox, so `status` (the admin
 * tree's snapshot provider reads it) answers while a handler runs.
 *
 * Failures of the store itself (the database away, say) are retried with backoff, up to
 * `maxStoreFailures` in a row; past that the actor exits with the error, and its supervisor reports
 * and restarts it like any crashed child. A handler failure is never a crash: it is a nak.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { exponentialBackoff } from '../../actors/backoff.js';
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { GenServer, StartFailed, Supervisor, worker, type ChildSpec } from '../../behaviours/index.js';
import { RuntimeTracer } from '../../telemetry/index.js';
import { StreamInvalidArgument } from './errors.js';
import { checkInteger, STREAM_LIMITS } from './limits.js';
import { StreamSpanName } from './sql-store.js';
import type { ConsumerConfig, Delivery, StreamStore } from './store.js';

export type StreamHandler = (delivery: Delivery, signal: AbortSignal) => unknown;

export interface NakBackoff {
  /** Delay of the first nak (default 1,000 ms). */
  readonly initialMs?: number;
  /** Ceiling (default 60,000 ms). */
  readonly maxMs?: number;
  /** Growth per delivery (default 2). */
  readonly factor?: number;
}

export interface StreamConsumerOptions {
  readonly store: StreamStore;
  readonly stream: string;
  readonly consumer: string;
  /** Settings to create the consumer with if it does not exist (an existing one must match). */
  readonly config?: ConsumerConfig;
  readonly handler: StreamHandler;
  /** Messages per fetch (default 32). */
  readonly batch?: number;
  /** Deliveries of one batch handled at once (default 1: in sequence order). */
  readonly concurrency?: number;
  /** How long one fetch waits for messages before it polls again (default 1,000 ms). */
  readonly pollWaitMs?: number;
  /** A handler running longer is aborted and naked (default: the consumer's ackWaitMs). */
  readonly handlerTimeoutMs?: number;
  readonly backoff?: NakBackoff;
  /** Store failures in a row before the actor gives up and crashes (default 5). */
  readonly maxStoreFailures?: number;
}

export interface StreamConsumerStatus {
  readonly stream: string;
  readonly consumer: string;
  /** Messages published and not yet delivered to this consumer (at the last look). */
  readonly lag: number;
  /** Deliveries held unacked by all workers of this consumer (at the last look). */
  readonly pending: number;
  /** Handled here: acked, naked after a failure. */
  readonly acked: number;
  readonly failed: number;
  readonly inFlight: number;
  readonly lastError?: string;
}

/** The behaviour name the admin tree knows it by (`ProcessInfo.behaviour`: the server's class name). */
export const STREAM_CONSUMER_BEHAVIOUR = 'StreamConsumerServer';

const INFO_INTERVAL_MS = 1_000;
/** Pause after the n-th failed store call in a row: 200 ms, doubling, at most 5 s. */
const STORE_FAILURE_BACKOFF = { baseMs: 100, capMs: 5_000 };

type Call = 'status';

export class StreamConsumerServer extends GenServer<Call, StreamConsumerStatus, never, { readonly crash: unknown }> {
  readonly #options: StreamConsumerOptions;
  readonly #batch: number;
  readonly #concurrency: number;
  readonly #pollWaitMs: number;
  readonly #maxStoreFailures: number;
  readonly #backoff: Required<NakBackoff>;
  readonly #tracer = new RuntimeTracer();
  #handlerTimeoutMs = 0;
  #lag = 0;
  #pending = 0;
  #acked = 0;
  #failed = 0;
  #inFlight = 0;
  #lastError: string | undefined;
  #infoAt = Number.NEGATIVE_INFINITY;
  #loop: Promise<void> | undefined;
  /** Aborted by terminate (the actor's own signal aborts only once it has exited, after terminate). */
  readonly #stopping = new AbortController();

  constructor(options: StreamConsumerOptions) {
    super();
    if (typeof options?.handler !== 'function') throw new StreamInvalidArgument('handler', 'must be a function');
    this.#options = options;
    this.#batch = checkInteger('batch', options.batch, 32, 1, STREAM_LIMITS.maxFetchBatch, 'streams.maxFetchBatch');
    this.#concurrency = checkInteger('concurrency', options.concurrency, 1, 1, STREAM_LIMITS.maxFetchBatch);
    this.#pollWaitMs = checkInteger('pollWaitMs', options.pollWaitMs, 1_000, 1, STREAM_LIMITS.maxFetchWaitMs, 'streams.maxFetchWaitMs');
    this.#maxStoreFailures = checkInteger('maxStoreFailures', options.maxStoreFailures, 5, 1, 1_000);
    this.#backoff = {
      initialMs: checkInteger('backoff.initialMs', options.backoff?.initialMs, 1_000, 0, STREAM_LIMITS.maxNakDelayMs),
      maxMs: checkInteger('backoff.maxMs', options.backoff?.maxMs, 60_000, 0, STREAM_LIMITS.maxNakDelayMs),
      factor: options.backoff?.factor ?? 2,
    };
    if (options.handlerTimeoutMs !== undefined) this.#handlerTimeoutMs = checkInteger('handlerTimeoutMs', options.handlerTimeoutMs, 0, 1, STREAM_LIMITS.maxAckWaitMs);
  }

  override async init(): Promise<void> {
    const { store, stream, consumer, config } = this.#options;
    const info = await store.createConsumer(stream, consumer, config);
    if (this.#handlerTimeoutMs === 0) this.#handlerTimeoutMs = info.config.ackWaitMs;
    this.#lag = info.lag;
    this.#pending = info.pending;
    this.ctx.signal.addEventListener('abort', () => this.#stopping.abort(this.ctx.signal.reason), { once: true });
    this.#loop = this.#run().catch((error: unknown) => {
      // Out of the loop's hands: the actor exits with it, and its supervisor reports and restarts.
      if (!this.#stopping.signal.aborted) this.ctx.send(this.self, { crash: error });
    });
  }

  override handleCall(): StreamConsumerStatus {
    return this.#status();
  }

  override handleInfo(message: { readonly crash: unknown }): void {
    if (message !== null && typeof message === 'object' && 'crash' in message) throw message.crash;
  }

  override async terminate(reason: unknown): Promise<void> {
    // A waiting fetch returns, running handlers see their signal abort; then the loop ends.
    this.#stopping.abort(reason);
    await this.#loop;
  }

  #status(): StreamConsumerStatus {
    const { stream, consumer } = this.#options;
    const status = { stream, consumer, lag: this.#lag, pending: this.#pending, acked: this.#acked, failed: this.#failed, inFlight: this.#inFlight };
    return this.#lastError === undefined ? status : { ...status, lastError: this.#lastError };
  }

  async #run(): Promise<void> {
    const { store, stream, consumer } = this.#options;
    const signal = this.#stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      let deliveries: Delivery[];
      try {
        deliveries = await store.fetch(stream, consumer, { batch: this.#batch, maxWaitMs: this.#pollWaitMs, signal });
        await this.#refreshInfo();
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        failures++;
        this.#lastError = error instanceof Error ? error.message : String(error);
        this.ctx.log.warn({ event: 'stream.consumer_store_failed', stream, consumer, failures, err: error }, 'stream consumer: store call failed');
        if (failures >= this.#maxStoreFailures) throw error;
        await sleep(exponentialBackoff(STORE_FAILURE_BACKOFF, failures), undefined, { signal }).catch(() => undefined);
        continue;
      }
      await this.#handleAll(deliveries);
    }
  }

  async #refreshInfo(): Promise<void> {
    const now = this.ctx.system.clock.now();
    if (now - this.#infoAt < INFO_INTERVAL_MS) return;
    this.#infoAt = now;
    const info = await this.#options.store.consumerInfo(this.#options.stream, this.#options.consumer);
    this.#lag = info.lag;
    this.#pending = info.pending;
  }

  /**
   * Handles a batch in `concurrency` lanes. Settling (ack or nak) is not awaited per message: the
   * batch's acks join one group commit instead of paying one commit each; all are settled before
   * the next fetch.
   */
  async #handleAll(deliveries: readonly Delivery[]): Promise<void> {
    let next = 0;
    const settling: Promise<void>[] = [];
    const lane = async (): Promise<void> => {
      while (next < deliveries.length && !this.#stopping.signal.aborted) {
        const delivery = deliveries[next++]!;
        const span = this.#tracer.startSpan(StreamSpanName.deliver, {
          'messaging.destination.name': delivery.stream,
          'messaging.consumer.group.name': delivery.consumer,
          'messaging.message.id': delivery.seq,
          'messaging.delivery_count': delivery.deliveryCount,
        }, delivery.headers);
        const failure = await this.#run1(delivery);
        // Stopping: leave it pending, it is redelivered after its deadline (or to another worker).
        if (this.#stopping.signal.aborted) span?.end(failure);
        else settling.push(this.#settle(delivery, failure, span));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, deliveries.length) }, lane));
    await Promise.all(settling);
  }

  /** Runs the handler; answers its failure (undefined: it succeeded). */
  async #run1(delivery: Delivery): Promise<unknown> {
    const controller = new AbortController();
    const stopping = this.#stopping.signal;
    const onExit = (): void => controller.abort(stopping.reason);
    stopping.addEventListener('abort', onExit, { once: true });
    // The handler's deadline is on the system's clock, as the delivery deadline in the store is.
    const clock = this.ctx.system.clock;
    const timer = clock.setTimer(() => controller.abort(new Error(`handler ran past ${this.#handlerTimeoutMs} ms`)), this.#handlerTimeoutMs);
    this.#inFlight++;
    try {
      await Promise.race([
        Promise.resolve().then(() => this.#options.handler(delivery, controller.signal)),
        new Promise((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })),
      ]);
      return undefined;
    } catch (error) {
      return error ?? new Error('handler failed');
    } finally {
      clock.clearTimer(timer);
      stopping.removeEventListener('abort', onExit);
      this.#inFlight--;
    }
  }

  async #settle(delivery: Delivery, failure: unknown, span: { end(error?: unknown): void } | undefined): Promise<void> {
    try {
      if (failure === undefined) {
        await delivery.ack();
        this.#acked++;
      } else {
        this.#failed++;
        this.#lastError = failure instanceof Error ? failure.message : String(failure);
        this.ctx.log.warn({ event: 'stream.handler_failed', stream: delivery.stream, consumer: delivery.consumer, seq: delivery.seq, deliveries: delivery.deliveryCount, err: failure }, 'stream handler failed; naked');
        await delivery.nak(this.#nakDelay(delivery.deliveryCount));
      }
      span?.end(failure);
    } catch (error) {
      // The ack or nak did not land: the delivery stays pending and comes back after its deadline.
      span?.end(error);
      this.#lastError = error instanceof Error ? error.message : String(error);
      this.ctx.log.warn({ event: 'stream.settle_failed', stream: delivery.stream, consumer: delivery.consumer, seq: delivery.seq, err: error }, 'stream consumer: ack or nak failed');
    }
  }

  #nakDelay(deliveryCount: number): number {
    const { initialMs, maxMs, factor } = this.#backoff;
    return exponentialBackoff({ baseMs: initialMs, capMs: maxMs, factor }, deliveryCount - 1);
  }
}

/** The restart intensity of the supervisor `StreamConsumer.start` runs a consumer under (OTP's default is 1 in 5 s). */
const CONSUMER_RESTARTS = { intensity: 3, periodMs: 10_000 } as const;

/** Supervisors that `StreamConsumer.start` made, each with its one consumer child. */
const ownSupervisors = new WeakSet<Ref>();

/** The first name free on this system for a consumer's supervisor: one per stream and consumer, numbered for competing ones. */
function supervisorName(system: ActorRuntime, options: StreamConsumerOptions, name: string | undefined): string {
  const base = name === undefined ? `molo.stream_consumer.${options.stream}.${options.consumer}.supervisor` : `${name}.supervisor`;
  let candidate = base;
  for (let n = 2; system.whereis(candidate) !== undefined; n++) candidate = `${base}.${n}`;
  return candidate;
}

/** A child's init error, out of the supervisor's start failure around it (StartFailed → failed child → init's error). */
function initError(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 6 && current instanceof StartFailed; depth++) {
    const reason = (current as StartFailed).reason as unknown;
    const inner = (reason as { failedToStartChild?: { reason?: unknown } } | null)?.failedToStartChild?.reason ?? reason;
    if (inner === current) break;
    current = inner;
  }
  return current instanceof Error ? current : error;
}

export const StreamConsumer = {
  /**
   * Starts a consumer actor under a supervisor of its own (`molo.stream_consumer.<stream>.<consumer>.supervisor`,
   * or `<name>.supervisor`), which restarts it if it crashes (3 in 10 s) and stops it with itself;
   * resolves with that supervisor's ref, which `status` and `GenServer.stop` accept. In an
   * application's tree, place `StreamConsumer.child` instead.
   */
  async start(system: ActorRuntime, options: StreamConsumerOptions, start: { readonly name?: string } = {}): Promise<Ref> {
    let supervisor: Ref;
    try {
      supervisor = await Supervisor.start(
        system,
        {
          strategy: 'one_for_one',
          intensity: CONSUMER_RESTARTS.intensity,
          periodMs: CONSUMER_RESTARTS.periodMs,
          children: [worker('consumer', () => new StreamConsumerServer(options), start.name === undefined ? {} : { server: { name: start.name } })],
        },
        { name: supervisorName(system, options, start.name) },
      );
    } catch (error) {
      throw initError(error);
    }
    ownSupervisors.add(supervisor);
    return supervisor;
  },
  /** A supervisor child spec running the consumer (permanent by default). */
  child(id: string, options: StreamConsumerOptions, spec: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec {
    return worker(id, () => new StreamConsumerServer(options), spec);
  },
  /** The consumer's status: lag, pending, counts (what the admin tree shows); `ref` is the consumer or the supervisor `start` made. */
  async status(system: ActorRuntime, ref: Ref, timeoutMs?: number): Promise<StreamConsumerStatus> {
    return GenServer.call<StreamConsumerServer>(system, await StreamConsumer.consumerOf(system, ref), 'status', timeoutMs);
  },
  /** The consumer actor running now: `ref` itself, or the current child of a supervisor `start` made. */
  async consumerOf(system: ActorRuntime, ref: Ref): Promise<Ref> {
    if (!ownSupervisors.has(ref)) return ref;
    const child = (await Supervisor.whichChildren(system, ref))[0]?.ref;
    return typeof child === 'object' ? child : ref;
  },
};

/**
 * The main thread's end of one worker: a bounded queue of requests, sent in batches.
 *
 * Every request issued in the same tick goes out as one `call` to the worker actor (a thread hop
 * costs about as much as thousands of statements), as soon as the batch is full or at the end of
 * the tick, and within the placement's payload cap. Up to MAX_BATCHES_IN_FLIGHT batches are
 * pipelined, so the worker never waits for the main thread between batches; it runs them in order,
 * so statements keep the order they were issued in.
 *
 * The worker actor is supervised: when it dies, `detach` fails what it had in flight, and `attach`
 * hands the channel the restarted actor. Each attach is a new generation; a request bound to a
 * generation (a transaction's statements, a cursor's fetches) fails rather than reach a new handle
 * that has no transaction or cursor.
 */
import { CalleeExited, CallTimeout, NoProc, PayloadTooLarge, type ActorRuntime, type Ref } from '../../actors/index.js';
import { QueueFull, RowTooLarge } from '../errors.js';
import type { Value } from '../values.js';
import { DirectLink, type DirectReply } from './direct-link.js';
import { Batch, InFlight, TransportFailure, type Request } from './in-flight.js';
import { encodeParams } from './params.js';
import { Answer, NO_LEASE, Op, type ReplyFrame } from './protocol.js';

/** Batches sent and not yet answered, per worker. */
const MAX_BATCHES_IN_FLIGHT = 16;
/** Requests per batch at most: bounds the worker's time on one message and the reply's size. */
export const MAX_BATCH_OPS = 4_096;
/** Extra time a batch's call gets beyond the latest deadline in it, for the hop itself. */
const CALL_GRACE_MS = 2_000;
const MAX_CALL_TIMEOUT_MS = 330_000;
/** How long a (re)started worker gets to confirm its direct link before batches keep to the actor path. */
const BIND_TIMEOUT_MS = 10_000;

/** A batch sent on the direct link, until its reply (or its worker's exit). */
interface DirectBatch {
  readonly batch: Batch;
  readonly ref: Ref;
  readonly generation: number;
}

export { TransportFailure, type Request, type TransportFailureKind } from './in-flight.js';

export class WorkerChannel {
  #ref: Ref | undefined;
  #generation = 0;
  /** Full batches waiting for a pipeline slot, then the one being filled. */
  #sealed: Batch[] = [];
  #open: Batch | undefined;
  #queued = 0;
  #inFlight = 0;
  #batchesInFlight = 0;
  #scheduled = false;
  #closed = false;
  readonly #flush = (): void => this.#send();
  /** Resolvers waiting for an attach, and for the queue to empty. */
  #attachWaiters: (() => void)[] = [];
  #drainWaiters: (() => void)[] = [];
  /** Settles when the current generation ends (its actor exits, or the channel closes). */
  #ended = deferred();
  readonly #closedPromise = deferred();
  readonly #flying: InFlight;
  /** The direct data path (direct-link.ts), used once the current generation is bound to it. */
  readonly #link: DirectLink | undefined;
  readonly #direct = new Map<number, DirectBatch>();
  /** The generation whose worker confirmed the direct link; 0: none yet. */
  #bound = 0;
  /** Batches in flight on the actor path: the direct path waits for them, so batches never overtake. */
  #actorBatches = 0;

  constructor(
    readonly system: ActorRuntime,
    /** `sqlite <name> writer` and the like, for errors. */
    readonly label: string,
    readonly maxQueued: number,
    /** Bytes one batch may take (the placement's payload cap less headroom). */
    readonly budgetBytes: number,
    /** The worker's direct link name (WorkerOptions.direct); undefined: the actor path only. */
    directName?: string,
  ) {
    this.#flying = new InFlight(label);
    this.#link = directName === undefined ? undefined : new DirectLink(directName, this.#onDirectReply);
  }

  /** Requests queued or in flight. */
  get pending(): number {
    return this.#queued + this.#inFlight;
  }

  get generation(): number {
    return this.#generation;
  }

  get attached(): boolean {
    return this.#ref !== undefined;
  }

  get ref(): Ref | undefined {
    return this.#ref;
  }

  /** Settles once the channel is closed. */
  get closed(): Promise<unknown> {
    return this.#closedPromise.promise;
  }

  /**
   * Queues a statement (Query or StreamOpen), encoding its parameters straight into the batch.
   * Throws QueueFull when the cap is reached, EncodeFailed or TooManyParameters for bad
   * parameters, RowTooLarge when the statement alone is over the payload cap.
   */
  statement(request: Request, kind: number, sql: string, params: readonly Value[] | undefined, limit: number, deadline: number, lease: number): void {
    const batch = this.#batchFor(request, 0);
    if (batch === undefined) return;
    const { builder } = batch;
    const start = builder.params.length;
    const valueBytes = encodeParams(params, builder.params);
    const bytes = builder.statementBytes(sql, valueBytes);
    if (bytes > this.budgetBytes) {
      builder.params.length = start;
      throw new RowTooLarge(bytes, this.budgetBytes);
    }
    if (builder.size > 0 && builder.bytes + bytes > this.budgetBytes) {
      builder.params.length = start;
      this.#seal();
      return this.statement(request, kind, sql, params, limit, deadline, lease);
    }
    builder.statement(kind, sql, builder.params.length - start, valueBytes, limit, deadline, lease, request.generation);
    this.#queuedOne(batch, request);
  }

  /**
   * Queues any other op. Throws QueueFull when the cap is reached. `now`: its batch goes at once
   * (pipeline slots permitting), so the worker starts on it while the caller prepares the next.
   */
  op(request: Request, kind: number, args: unknown[], argBytes: number, deadline: number, lease: number, now = false): void {
    const batch = this.#batchFor(request, argBytes);
    if (batch === undefined) return;
    batch.builder.op(kind, args, argBytes, deadline, lease, request.generation);
    this.#queuedOne(batch, request);
    if (now && this.#open === batch) {
      this.#seal();
      if (this.#batchesInFlight < MAX_BATCHES_IN_FLIGHT) this.#send(true);
    }
  }

  #batchFor(request: Request, bytes: number): Batch | undefined {
    if (this.#closed) {
      request.reject(new TransportFailure('closed', `${this.label} is closed`));
      return undefined;
    }
    if (this.pending >= this.maxQueued) throw new QueueFull(`${this.label} requests (sqlite.maxQueuedRequests)`, this.maxQueued);
    if (request.generation !== 0 && request.generation !== this.#generation) {
      request.reject(new TransportFailure('stale', `${this.label} was restarted`));
      return undefined;
    }
    let batch = this.#open;
    if (batch !== undefined && batch.builder.size > 0 && batch.builder.bytes + bytes + 32 > this.budgetBytes) {
      this.#seal();
      batch = undefined;
    }
    return batch ?? (this.#open = new Batch());
  }

  #queuedOne(batch: Batch, request: Request): void {
    batch.requests.push(request);
    this.#queued++;
    if (batch.builder.size >= MAX_BATCH_OPS) {
      // A full batch goes now, so the worker starts on it while the caller is still issuing more.
      this.#seal();
      if (this.#batchesInFlight < MAX_BATCHES_IN_FLIGHT) this.#send(true);
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flush);
    }
  }

  #seal(): void {
    if (this.#open !== undefined && this.#open.builder.size > 0) this.#sealed.push(this.#open);
    this.#open = undefined;
  }

  /** Settles, with why, when generation `generation` is over; at once if it already is. */
  ended(generation: number): Promise<unknown> {
    return generation === this.#generation && this.#ref !== undefined ? this.#ended.promise : Promise.resolve('restarted');
  }

  /** A (re)started worker actor. */
  attach(ref: Ref): void {
    if (this.#closed) return;
    this.#ref = ref;
    this.#generation++;
    this.#bound = 0;
    this.#ended = deferred();
    const waiters = this.#attachWaiters;
    this.#attachWaiters = [];
    for (const wake of waiters) wake();
    this.#bind();
    this.#send();
  }

  /** Asks the new worker (through the actor, in order with the rest) to answer this generation on the direct link. */
  #bind(): void {
    if (this.#link === undefined) return;
    const generation = this.#generation;
    const request: Request = {
      generation,
      answer: (_frame, _index, value) => {
        if (value === true && generation === this.#generation) this.#bound = generation;
      },
      reject: () => undefined, // stays on the actor path
    };
    try {
      this.op(request, Op.Bind, [generation], 16, Date.now() + BIND_TIMEOUT_MS, NO_LEASE);
    } catch {
      // The queue is full: this generation keeps to the actor path.
    }
  }

  /** Resolves true once a worker is attached, false after `timeoutMs` without one. */
  whenAttached(timeoutMs: number): Promise<boolean> {
    if (this.#ref !== undefined) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(this.#ref !== undefined);
      };
      const timer = setTimeout(() => {
        this.#attachWaiters = this.#attachWaiters.filter((other) => other !== wake);
        resolve(false);
      }, timeoutMs);
      this.#attachWaiters.push(wake);
    });
  }

  /** Resolves once nothing is queued or in flight, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#drainWaiters = this.#drainWaiters.filter((other) => other !== wake);
        resolve();
      }, timeoutMs);
      this.#drainWaiters.push(wake);
    });
  }

  /** The worker actor `ref` exited: what it held is lost; queued requests bound to it fail. */
  detach(ref: Ref, reason: unknown): void {
    this.#failDirect(ref, reason);
    if (this.#ref !== ref) return;
    this.#ref = undefined;
    this.#bound = 0;
    this.#ended.resolve(reason);
    const failure = new TransportFailure('lost', `${this.label} exited`, reason);
    for (const batch of this.#queuedBatches()) {
      const generations = batch.builder.generations;
      for (let i = 0; i < batch.requests.length; i++) {
        if (generations[i] === 0 || batch.builder.kinds[i] === Op.Skip) continue;
        batch.builder.skip(i);
        batch.requests[i]!.reject(failure);
      }
    }
  }

  /** Batches on the direct link to the exited worker `ref` get no reply: they fail as lost. */
  #failDirect(ref: Ref, reason: unknown): void {
    if (this.#direct.size > 0) {
      const failure = new TransportFailure('lost', `${this.label} exited`, reason);
      for (const [id, sent] of this.#direct) {
        if (sent.ref !== ref) continue;
        this.#direct.delete(id);
        this.#link!.forget();
        this.#failWith(sent.batch, failure);
      }
    }
    if (this.#closed && this.#direct.size === 0) this.#link?.close();
  }

  readonly #onDirectReply = (reply: DirectReply): void => {
    const sent = this.#direct.get(reply.i);
    if (sent === undefined) return;
    this.#direct.delete(reply.i);
    if (reply.r !== undefined) this.#answered(sent.batch, reply.r, sent.generation);
    else this.#failWith(sent.batch, new TransportFailure('lost', `${this.label}: ${reply.e ?? 'no reply'}`));
    if (this.#closed && this.#direct.size === 0) this.#link?.close();
  };

  /** Fails everything queued (in-flight calls fail on their own when the actor stops). */
  close(failure: TransportFailure): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#flying.stop();
    if (this.#direct.size === 0) this.#link?.close();
    this.#ended.resolve(failure);
    this.#closedPromise.resolve(failure);
    const batches = this.#queuedBatches();
    this.#sealed = [];
    this.#open = undefined;
    this.#queued = 0;
    for (const batch of batches) {
      for (let i = 0; i < batch.requests.length; i++) if (batch.builder.kinds[i] !== Op.Skip) batch.requests[i]!.reject(failure);
    }
    const waiters = this.#attachWaiters;
    this.#attachWaiters = [];
    for (const wake of waiters) wake();
    this.#wakeDrained();
  }

  #queuedBatches(): Batch[] {
    return this.#open === undefined ? [...this.#sealed] : [...this.#sealed, this.#open];
  }

  #wakeDrained(): void {
    if (this.pending !== 0 || this.#drainWaiters.length === 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Sends queued batches while pipeline slots are free; `sealedOnly`: leave the one being filled. */
  #send(sealedOnly = false): void {
    if (!sealedOnly) this.#scheduled = false;
    const ref = this.#ref;
    while (ref !== undefined && this.#batchesInFlight < MAX_BATCHES_IN_FLIGHT) {
      let batch = this.#sealed.shift();
      if (batch === undefined && !sealedOnly && this.#open !== undefined) {
        batch = this.#open;
        this.#open = undefined;
      }
      if (batch === undefined) break;
      this.#transmit(ref, batch);
    }
  }

  #transmit(ref: Ref, batch: Batch): void {
    const { builder, requests } = batch;
    const generation = this.#generation;
    const generations = builder.generations;
    const deadlines = builder.deadlines;
    let latest = 0;
    for (let i = 0; i < requests.length; i++) {
      if (builder.kinds[i] === Op.Skip) continue;
      if (generations[i] !== 0 && generations[i] !== generation) {
        builder.skip(i);
        requests[i]!.reject(new TransportFailure('stale', `${this.label} was restarted`));
        continue;
      }
      if (deadlines[i]! > latest) latest = deadlines[i]!;
    }
    this.#flying.add(batch);
    this.#queued -= requests.length;
    this.#inFlight += requests.length;
    this.#batchesInFlight++;
    if (this.#bound === generation && this.#actorBatches === 0) {
      // The direct link: one postMessage each way. A wedged worker's requests still fail on their
      // deadlines (InFlight); its exit fails the batch (detach).
      this.#direct.set(this.#link!.post(generation, builder.frame()), { batch, ref, generation });
      return;
    }
    this.#actorBatches++;
    const timeout = Math.min(MAX_CALL_TIMEOUT_MS, Math.max(0, latest - Date.now()) + CALL_GRACE_MS);
    let reply: Promise<ReplyFrame>;
    try {
      reply = this.system.call<ReplyFrame>(ref, builder.frame(), timeout);
    } catch (error) {
      reply = Promise.reject(error);
    }
    reply.then(
      (frame) => {
        this.#actorBatches--;
        this.#answered(batch, frame, generation);
      },
      (error: unknown) => {
        this.#actorBatches--;
        this.#failed(batch, ref, error);
      },
    );
  }

  #answered(batch: Batch, frame: ReplyFrame, generation: number): void {
    const { requests, expired } = batch;
    this.#settle(batch);
    const answers = frame.k;
    const slots = batch.builder.slots;
    let next = 0;
    for (let i = 0; i < requests.length; i++) {
      const kind = answers[2 * i];
      if (kind === Answer.Skipped) continue;
      const value = kind === Answer.Value ? frame.v[next++] : undefined;
      if (expired === undefined || expired[i] === 0) requests[i]!.answer(frame, i, value, slots[i]!, generation);
    }
  }

  #failed(batch: Batch, ref: Ref, error: unknown): void {
    const failure = describeFailure(this.label, error);
    this.#failWith(batch, failure);
    // A worker that timed out may be wedged in one statement; it is not detached for that (its
    // later replies still come), but an exit is: the supervisor restarts it.
    if (failure.kind === 'lost') this.detach(ref, error);
  }

  #failWith(batch: Batch, failure: TransportFailure): void {
    const { requests, builder, expired } = batch;
    this.#settle(batch);
    for (let i = 0; i < requests.length; i++) {
      if (builder.kinds[i] !== Op.Skip && (expired === undefined || expired[i] === 0)) requests[i]!.reject(failure);
    }
  }

  #settle(batch: Batch): void {
    const count = batch.requests.length;
    this.#flying.delete(batch);
    this.#inFlight -= count;
    this.#batchesInFlight--;
    if ((this.#sealed.length > 0 || this.#open !== undefined) && !this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flush);
    }
    this.#wakeDrained();
  }
}

function describeFailure(label: string, error: unknown): TransportFailure {
  if (error instanceof CallTimeout) return new TransportFailure('timeout', `${label} did not answer within ${error.timeoutMs} ms`, error);
  if (error instanceof PayloadTooLarge) return new TransportFailure('too_large', error.message, error);
  if (error instanceof CalleeExited || error instanceof NoProc) return new TransportFailure('lost', `${label} exited`, error);
  return new TransportFailure('lost', `${label}: ${error instanceof Error ? error.message : String(error)}`, error);
}

interface Deferred {
  readonly promise: Promise<unknown>;
  resolve(value: unknown): void;
}

function deferred(): Deferred {
  let resolve!: (value: unknown) => void;
  const promise = new Promise<unknown>((settle) => (resolve = settle));
  return { promise, resolve };
}

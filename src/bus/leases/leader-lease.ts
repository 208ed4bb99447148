/**
 * `LeaderLease`: a supervised actor that contends for one lease and says when this node becomes
 * leader (`elected`, with its fencing token) and when it stops being one (`deposed`).
 *
 * Two roles. A follower tries to take the lease every `renewEveryMs` and does nothing else (S7-5:
 * followers stay passive). A leader renews every `renewEveryMs`; it counts its term from the moment
 * it *sent* the write that took or renewed the lease, so its own view always ends before the store's
 * expiry, and it steps down `safetyMarginMs` before that even if no renewal answers (a hung database,
 * a paused process) — before any follower can take over. A renewal refused by the store (the lease
 * expired and someone else took it) deposes at once.
 *
 * Store calls never run inside a handler's await: they run beside the mailbox and report back as
 * messages, so the step-down timer fires on time even while a call hangs. A result from an earlier
 * term (the role changed while it was in flight) is ignored. Timers and time are the actor system's
 * injected clock, and the store's expiry its clock: give both the same one.
 */
import type { Ref, TimerEntry } from '../../actors/index.js';
import { GenServer } from '../../behaviours/gen-server.js';
import { worker, type ChildSpec } from '../../behaviours/child-spec.js';
import { acquireLease, releaseLease, renewLease, type LeaseRecord } from './lease-record.js';
import type { DeposedReason, LeaseCall, LeaseEvent, LeaseRole, LeaseStatus } from './events.js';
import { resolveLeaseOptions, type LeaderLeaseOptions, type ResolvedLeaseOptions } from './options.js';

type Attempt = { readonly ok: true; readonly record: LeaseRecord | undefined } | { readonly ok: false; readonly error: unknown };

/** Internal messages; classes so nothing from outside can forge them by shape. */
class Tick {}
class AttemptDone {
  constructor(
    readonly term: number,
    readonly sentAt: number,
    readonly attempt: Attempt,
  ) {}
}
class StepDown {
  constructor(readonly term: number) {}
}

export class LeaderLease extends GenServer<LeaseCall, LeaseStatus | void, never, unknown> {
  readonly #options: ResolvedLeaseOptions;
  #role: LeaseRole = 'follower';
  /** Counts role changes: results of attempts sent in an earlier term are stale. */
  #term = 0;
  #held: LeaseRecord | undefined;
  /** Monotonic clock time the leader's term ends (its last successful write's send time + TTL − margin). */
  #leaderUntil = 0;
  #stepDownTimer: TimerEntry | undefined;
  #inFlight = false;
  readonly #subscribers: Ref[] = [];

  constructor(options: LeaderLeaseOptions) {
    super();
    this.#options = resolveLeaseOptions(options);
  }

  override init(): void {
    this.ctx.send(this.self, new Tick());
  }

  override handleCall(request: LeaseCall): LeaseStatus | void {
    switch (request.type) {
      case 'status':
        return this.#status();
      case 'subscribe':
        this.#subscribers.push(request.subscriber);
        return;
      default:
        return unreachable(request);
    }
  }

  override handleInfo(message: unknown): void {
    if (message instanceof Tick) return this.#tick();
    if (message instanceof AttemptDone) return this.#settle(message);
    if (message instanceof StepDown) {
      if (message.term === this.#term && this.#role === 'leader' && this.ctx.now() >= this.#leaderUntil) this.#depose('expired');
    }
  }

  override async terminate(): Promise<void> {
    const held = this.#held;
    if (this.#role !== 'leader' || held === undefined) return;
    this.#depose('stopped');
    // Freeing the lease lets a follower take over at once instead of after the TTL.
    try {
      await releaseLease(this.#options.store, this.#options.key, held);
    } catch (error) {
      this.ctx.log.warn({ event: 'lease.release_failed', lease: this.#options.name, err: error }, 'lease.release_failed');
    }
  }

  #tick(): void {
    this.ctx.sendAfter(this.#options.renewEveryMs, new Tick());
    // One store call at a time: a slow one is not piled on.
    if (this.#inFlight) return;
    this.#inFlight = true;
    const { store, key, holder, ttlMs } = this.#options;
    const term = this.#term;
    const sentAt = this.ctx.now();
    const held = this.#held;
    const call = this.#role === 'leader' && held !== undefined ? renewLease(store, key, held, ttlMs) : acquireLease(store, key, holder, ttlMs);
    const self = this.self;
    const system = this.ctx.system;
    call.then(
      (record) => system.send(self, new AttemptDone(term, sentAt, { ok: true, record })),
      (error: unknown) => system.send(self, new AttemptDone(term, sentAt, { ok: false, error })),
    );
  }

  #settle(done: AttemptDone): void {
    this.#inFlight = false;
    if (done.term !== this.#term) return;
    const { attempt } = done;
    if (!attempt.ok) {
      // A leader keeps leading until its term runs out: the store may answer the next renewal.
      this.ctx.log.warn({ event: 'lease.store_failed', lease: this.#options.name, role: this.#role, err: attempt.error }, 'lease.store_failed');
      return;
    }
    if (attempt.record === undefined) {
      if (this.#role === 'leader') this.#depose('lost');
      return;
    }
    const until = done.sentAt + this.#options.ttlMs - this.#options.safetyMarginMs;
    // An answer so slow that the term it started is already over: not a term to lead in.
    if (this.ctx.now() >= until) {
      if (this.#role === 'leader') this.#depose('expired');
      return;
    }
    this.#held = attempt.record;
    this.#leaderUntil = until;
    const elected = this.#role === 'follower';
    if (elected) {
      this.#role = 'leader';
      this.#term++;
    }
    // Armed with the current term, so a timer of an earlier term can never depose this one.
    this.#armStepDown();
    if (elected) this.#emit({ type: 'elected', lease: this.#options.name, holder: this.#options.holder, token: attempt.record.token });
  }

  #armStepDown(): void {
    if (this.#stepDownTimer !== undefined) this.ctx.cancelTimer(this.#stepDownTimer);
    this.#stepDownTimer = this.ctx.sendAfter(Math.max(0, this.#leaderUntil - this.ctx.now()), new StepDown(this.#term));
  }

  #depose(reason: DeposedReason): void {
    const token = this.#held?.token ?? 0;
    this.#role = 'follower';
    this.#term++;
    // The record is kept: a renewal that lands after this lets acquireLease re-take the lease as its holder.
    if (this.#stepDownTimer !== undefined) this.ctx.cancelTimer(this.#stepDownTimer);
    this.#stepDownTimer = undefined;
    this.#emit({ type: 'deposed', lease: this.#options.name, holder: this.#options.holder, token, reason });
  }

  #emit(event: LeaseEvent): void {
    const level = event.type === 'deposed' && event.reason !== 'stopped' ? 'warn' : 'info';
    this.ctx.log[level]({ event: `lease.${event.type}`, lease: event.lease, holder: event.holder, token: event.token, reason: event.type === 'deposed' ? event.reason : undefined }, `lease.${event.type}`);
    for (const subscriber of this.#subscribers) this.ctx.send(subscriber, event);
    if (this.#options.onEvent !== undefined) {
      try {
        this.#options.onEvent(event);
      } catch (error) {
        this.ctx.log.warn({ event: 'lease.callback_failed', lease: event.lease, err: error }, 'lease.callback_failed');
      }
    }
  }

  #status(): LeaseStatus {
    const leader = this.#role === 'leader';
    return {
      lease: this.#options.name,
      holder: this.#options.holder,
      role: this.#role,
      token: leader ? (this.#held?.token ?? null) : null,
      remainingMs: leader ? Math.max(0, this.#leaderUntil - this.ctx.now()) : null,
      pending: this.#inFlight,
    };
  }

  /** Starts a lease actor (not supervised; prefer {@link leaderLeaseChild} under a supervisor). */
  static startLease(system: Parameters<typeof GenServer.start>[0], options: LeaderLeaseOptions): Promise<Ref> {
    return GenServer.start(system, () => new LeaderLease(options), { trapExit: true });
  }

  /** The lease actor's status: role, token, time left. */
  static status(system: Parameters<typeof GenServer.call>[0], lease: Ref | string): Promise<LeaseStatus> {
    return GenServer.call<LeaderLease>(system, lease, { type: 'status' }) as Promise<LeaseStatus>;
  }

  /** Sends `subscriber` every later `elected`/`deposed` event as a message. */
  static async subscribe(system: Parameters<typeof GenServer.call>[0], lease: Ref | string, subscriber: Ref): Promise<void> {
    await GenServer.call<LeaderLease>(system, lease, { type: 'subscribe', subscriber });
  }
}

/** A supervisor child spec for a lease actor; it traps exits, so a supervisor's shutdown releases the lease. */
export function leaderLeaseChild(id: string, options: LeaderLeaseOptions, spec: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec {
  return worker(id, () => new LeaderLease(options), { ...spec, server: { trapExit: true } });
}

function unreachable(value: never): never {
  throw new Error(`unknown lease call ${JSON.stringify(value)}`);
}

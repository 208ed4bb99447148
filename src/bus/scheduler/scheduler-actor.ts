/**
 * The scheduler actor: ticks every `tickMs` on the actor system's clock and, only while it leads,
 * enqueues what is due. It runs a LeaderLease of its own (S7-5: 10 s TTL, 3 s renewal) and hears
 * its `elected`/`deposed` events as messages; a follower does nothing on its ticks.
 *
 * Fencing, twice, so a deposed leader that wakes late cannot fire:
 * - when elected, it writes its token to the scheduler-wide fence key (`scheduler:<name>`) before
 *   its first fire, closing every schedule to its predecessor at once;
 * - every fire is one transaction that checks that key again, moves the entry's next fire by
 *   compare-and-set and enqueues with `fence: { key: 'schedule:<id>', token }`, which the queue
 *   checks too. A refused check (StaleFencingToken) rolls it all back; the actor stops firing until
 *   it is elected again.
 * Each fire also carries the idempotency key `schedule:<id>:<fire time>`, so two fires of one due
 * time can never make two tasks.
 */
import { exponentialBackoff } from '../../actors/backoff.js';
import { ExitMessage, type Ref } from '../../actors/index.js';
import { GenServer } from '../../behaviours/gen-server.js';
import type { KvStore } from '../../data/kv/index.js';
import { RuntimeTracer } from '../../telemetry/index.js';
import { checkFence, createFenceTable } from '../leases/fence.js';
import { StaleFencingToken } from '../leases/errors.js';
import type { LeaseEvent } from '../leases/events.js';
import { LeaderLease } from '../leases/leader-lease.js';
import { scheduleOf, type ScheduleEntry } from './entry.js';
import type { SchedulerCounts } from './metrics.js';
import { decideFires } from './missed-fires.js';
import { checkQueueDatabase, type ResolvedSchedulerOptions } from './options.js';

export const SchedulerSpanName = {
  /** One fire: its transaction (fence, next-fire update, enqueue). */
  fire: 'molo.scheduler.fire',
} as const;

export interface SchedulerActorConfig extends ResolvedSchedulerOptions {
  readonly leaseStore: KvStore;
  readonly counts: SchedulerCounts;
}

/** The name a scheduler actor registers under: one scheduler of a name per actor system. */
export function schedulerServerName(name: string): string {
  return `molo.scheduler.${name}`;
}

export type SchedulerCall = { readonly type: 'status' };

export interface SchedulerStatus {
  readonly name: string;
  readonly holder: string;
  /** `leader` once elected and fenced in (it fires); `elected` between the two; else `follower`. */
  readonly role: 'leader' | 'elected' | 'follower';
  /** Its LeaderLease actor (LeaderLease.status tells its term). */
  readonly lease: Ref | null;
  readonly token: number | null;
  readonly ticks: number;
  readonly fires: number;
  readonly skipped: number;
  readonly refused: number;
  readonly failures: number;
}

class Tick {}
class LeaseChanged {
  constructor(readonly event: LeaseEvent) {}
}
/** Thrown inside a fire's transaction when the entry changed since it was read: roll back, fire nothing. */
class EntryChanged extends Error {}

/** A failing entry (unknown queue, full queue) is retried after this long at first, doubling up to a minute. */
const FAILURE_BACKOFF_MS = 1_000;
const MAX_FAILURE_BACKOFF_MS = 60_000;

export class SchedulerServer extends GenServer<SchedulerCall, SchedulerStatus, never, unknown> {
  readonly #config: SchedulerActorConfig;
  readonly #tracer = new RuntimeTracer();
  #lease: Ref | undefined;
  #token: number | null = null;
  #fenced = false;
  #ticks = 0;
  readonly #backoff = new Map<string, { until: number; level: number }>();

  constructor(config: SchedulerActorConfig) {
    super();
    this.#config = config;
  }

  get #globalKey(): string {
    return `scheduler:${this.#config.name}`;
  }

  override async init(): Promise<void> {
    const self = this.self;
    const system = this.ctx.system;
    const { leaseStore, name, holder, lease, store, db } = this.#config;
    this.ctx.register(schedulerServerName(name));
    // Idempotent, so a supervised scheduler needs no setup step of its own.
    await checkQueueDatabase(this.#config);
    await store.create();
    await createFenceTable(db);
    // onEvent runs in the lease actor: it only forwards, so no event is missed between start and subscribe.
    this.#lease = await GenServer.start(system, () => new LeaderLease({ store: leaseStore, name, holder, ...lease, onEvent: (event) => system.send(self, new LeaseChanged(event)) }), {
      link: self,
      trapExit: true,
    });
    this.ctx.sendAfter(this.#config.tickMs, new Tick());
  }

  override handleCall(request: SchedulerCall): SchedulerStatus {
    if (request.type !== 'status') throw new Error(`unknown scheduler call ${JSON.stringify(request)}`);
    const { counts, name, holder } = this.#config;
    return {
      name,
      holder,
      role: this.#token === null ? 'follower' : this.#fenced ? 'leader' : 'elected',
      token: this.#token,
      lease: this.#lease ?? null,
      ticks: this.#ticks,
      fires: counts.fires,
      skipped: counts.skipped,
      refused: counts.refused,
      failures: counts.failures,
    };
  }

  override async handleInfo(message: unknown): Promise<void> {
    if (message instanceof Tick) {
      this.ctx.sendAfter(this.#config.tickMs, new Tick());
      this.#ticks++;
      if (this.#token === null) return;
      if (!this.#fenced) await this.#fenceIn();
      if (this.#fenced) await this.#fireDue();
      return;
    }
    if (message instanceof ExitMessage) {
      // Under a supervisor it traps exits: its lease dying (a crash) takes the scheduler down with it, to be restarted whole.
      if (this.#lease !== undefined && message.from.equals(this.#lease)) this.stop(message.reason);
      return;
    }
    if (message instanceof LeaseChanged) {
      const { event } = message;
      if (event.type === 'elected') {
        this.#token = event.token;
        this.#setFenced(false);
        await this.#fenceIn();
      } else {
        this.#token = null;
        this.#setFenced(false);
        this.ctx.log.info({ event: 'scheduler.following', scheduler: this.#config.name, token: event.token, reason: event.reason }, 'scheduler.following');
      }
    }
  }

  override async terminate(): Promise<void> {
    this.#setFenced(false);
    // Stopping the lease releases it, so a follower takes over on its next try rather than after the TTL.
    if (this.#lease !== undefined && this.ctx.system.isAlive(this.#lease)) await GenServer.stop(this.ctx.system, this.#lease).catch(() => undefined);
  }

  /** Writes the new token to the scheduler-wide fence key: from here on the old leader's fires are refused. */
  async #fenceIn(): Promise<void> {
    const token = this.#token;
    if (token === null) return;
    try {
      await this.#config.db.transaction((tx) => checkFence(tx, this.#globalKey, token));
      this.#setFenced(true);
      this.ctx.log.info({ event: 'scheduler.leading', scheduler: this.#config.name, token }, 'scheduler.leading');
    } catch (error) {
      if (error instanceof StaleFencingToken) {
        // A newer leader already fenced: this election is stale. Wait for the next one.
        this.#config.counts.refused++;
        this.#token = null;
      }
      this.ctx.log.warn({ event: 'scheduler.fence_in_failed', scheduler: this.#config.name, token, err: error }, 'scheduler.fence_in_failed');
    }
  }

  async #fireDue(): Promise<void> {
    const now = Math.floor(this.ctx.system.clock.wallNow());
    let due: ScheduleEntry[];
    try {
      due = await this.#config.store.due(now, this.#config.batch);
    } catch (error) {
      this.ctx.log.warn({ event: 'scheduler.read_failed', scheduler: this.#config.name, err: error }, 'scheduler.read_failed');
      return;
    }
    for (const entry of due) {
      if (!this.#fenced) return;
      const backoff = this.#backoff.get(entry.id);
      if (backoff !== undefined && backoff.until > now) continue;
      await this.#fire(entry, now);
    }
  }

  async #fire(entry: ScheduleEntry, now: number): Promise<void> {
    const { db, store, queue, counts, name, misfireGraceMs } = this.#config;
    const token = this.#token!;
    const expected = entry.nextFireAt!;
    const span = this.#tracer.startSpan(SchedulerSpanName.fire, { 'molo.scheduler': name, 'molo.schedule.id': entry.id, 'molo.task.queue': entry.queue, 'molo.fencing_token': token });
    let fireAt: number | null = null;
    try {
      const schedule = scheduleOf(entry.schedule);
      const decision = decideFires(schedule, expected, now, misfireGraceMs);
      fireAt = decision.fireAt;
      const enqueued = await db.transaction(async (tx) => {
        await checkFence(tx, this.#globalKey, token);
        // A one-shot entry is done once it fired: removed in the same transaction.
        if (!(await store.advance(tx, entry.id, expected, decision.nextDue, decision.fireAt, now, schedule.kind === 'at'))) throw new EntryChanged();
        if (decision.fireAt === null) return undefined;
        const input = { ...entry.task, idempotencyKey: `schedule:${entry.id}:${decision.fireAt}` };
        return queue.enqueue(entry.queue, input, { tx, fence: { key: `schedule:${entry.id}`, token } });
      });
      this.#backoff.delete(entry.id);
      counts.skipped += decision.missed;
      if (decision.missed > 0) {
        this.ctx.log.info({ event: 'scheduler.skipped', scheduler: name, schedule: entry.id, missed: decision.missed, policy: schedule.missed }, 'scheduler.skipped');
      }
      if (enqueued !== undefined && !enqueued.duplicate) {
        counts.fires++;
        this.ctx.log.debug({ event: 'scheduler.fired', scheduler: name, schedule: entry.id, queue: entry.queue, task: enqueued.id, fireAt: decision.fireAt, token }, 'scheduler.fired');
      }
      span?.end(undefined, { 'molo.schedule.fire_at': fireAt, 'molo.schedule.missed': decision.missed, 'molo.task.id': enqueued?.id });
    } catch (error) {
      span?.end(error instanceof EntryChanged ? undefined : error);
      if (error instanceof EntryChanged) return;
      if (error instanceof StaleFencingToken) {
        // Deposed while it thought it led: the database refused the fire and rolled it back.
        counts.refused++;
        this.#token = null;
        this.#setFenced(false);
        this.ctx.log.warn(
          { event: 'scheduler.fire_refused', scheduler: name, schedule: entry.id, fireAt, token, highest: error.highest },
          'scheduler.fire_refused',
        );
        return;
      }
      counts.failures++;
      const previous = this.#backoff.get(entry.id);
      const level = previous === undefined ? 0 : previous.level + 1;
      const delayMs = exponentialBackoff({ baseMs: FAILURE_BACKOFF_MS, capMs: MAX_FAILURE_BACKOFF_MS }, level);
      this.#backoff.set(entry.id, { until: now + delayMs, level });
      this.ctx.log.warn({ event: 'scheduler.fire_failed', scheduler: name, schedule: entry.id, queue: entry.queue, fireAt, retryInMs: delayMs, err: error }, 'scheduler.fire_failed');
    }
  }

  #setFenced(fenced: boolean): void {
    this.#fenced = fenced;
    this.#config.counts.leader = fenced ? 1 : 0;
  }
}

import { logReport } from '../telemetry/reports.js';
import {
  CallRequest,
  ExitMessage,
  formatReason,
  isCleanExit,
  shutdownWith,
  type ActorBehaviour,
  type ActorContext,
  type Envelope,
  type ExitReason,
  type Ref,
} from '../actors/index.js';
import { backoffDelay, resolveChildSpec, shouldRestart, type ChildSpec, type ResolvedChildSpec } from './child-spec.js';
import { shutdownAll, shutdownChild } from './child-shutdown.js';
import {
  ChildAlreadyPresent,
  ChildAlreadyStarted,
  ChildNotFound,
  ChildRestarting,
  ChildRunning,
  DynamicOnly,
  StartFailed,
  TooManyChildren,
} from './errors.js';
import { RestartLog } from './intensity.js';
import { nextLifecycleState, type LifecycleEventType, type LifecycleState } from './lifecycle.js';
import { StopRequest } from './stop-request.js';
import type { ChildCounts, ChildEntry, Strategy, SupervisorReply, SupervisorRequest, SupervisorStatus } from './supervisor-protocol.js';

interface ChildRecord {
  readonly key: string;
  readonly spec: ResolvedChildSpec;
  readonly args: readonly unknown[];
  ref: Ref | undefined;
  state: LifecycleState;
  /** Times started after the first start. */
  restartCount: number;
  started: boolean;
  /** Restarts in a row, for the backoff delay; reset once the child outlives `backoff.maxMs`. */
  backoffLevel: number;
  startedAt: number;
}

/** Sent to itself to retry a failed restart, after the backoff delay (OTP's try_again_restart). */
class RetryRestart {
  constructor(readonly key: string) {}
}

export interface SupervisorSettings {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly periodMs: number;
  readonly maxChildren: number;
  readonly children: readonly ResolvedChildSpec[];
  readonly parent: Ref | undefined;
}

type StartOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: ExitReason };

/**
 * The supervisor's logic: children in start order, a restart window, and the child lifecycle
 * table deciding every state change. Runs as a trapping actor.
 */
export class SupervisorRunner implements ActorBehaviour {
  readonly name = 'Supervisor';
  #ctx!: ActorContext;
  /** Every child, in start order (Map keeps insertion order). */
  readonly #children = new Map<string, ChildRecord>();
  readonly #byRef = new Map<Ref, ChildRecord>();
  #nextDynamicKey = 0;

  readonly #restarts: RestartLog;

  constructor(readonly settings: SupervisorSettings) {
    this.#restarts = new RestartLog(settings.intensity, settings.periodMs);
  }

  get #dynamic(): boolean {
    return this.settings.strategy === 'simple_one_for_one';
  }

  async init(ctx: ActorContext): Promise<void> {
    this.#ctx = ctx;
    ctx.trapExit(true);
    if (this.#dynamic) return;
    for (const spec of this.settings.children) {
      const record = this.#add(spec, []);
      const outcome = await this.#startRecord(record, 'START');
      if (!outcome.ok) {
        this.#children.delete(record.key);
        await this.#terminateAll();
        ctx.stop(shutdownWith({ failedToStartChild: spec.id, reason: outcome.reason }));
        return;
      }
      // OTP keeps no spec for a temporary child that answered ignore.
      if (record.ref === undefined && spec.restart === 'temporary') this.#children.delete(record.key);
    }
  }

  handle(ctx: ActorContext, message: Envelope<unknown>): void | Promise<void> {
    if (message instanceof ExitMessage) {
      if (this.settings.parent !== undefined && message.from === this.settings.parent) return ctx.stop(message.reason);
      const record = this.#byRef.get(message.from);
      return record === undefined ? undefined : this.#childExited(record, message.reason);
    }
    if (message instanceof CallRequest) return this.#answer(message as CallRequest<SupervisorRequest, SupervisorReply<unknown>>);
    if (message instanceof RetryRestart) {
      const record = this.#children.get(message.key);
      if (record !== undefined && record.state === 'backoff') return this.#traced(record, undefined, () => this.#startGroup(record));
      return;
    }
    if (message instanceof StopRequest) return ctx.stop(message.reason);
    // Stray DOWNs of children already shut down and unknown messages are ignored, as OTP does.
  }

  terminate(): Promise<void> {
    return this.#terminateAll();
  }

  // ---- restarts --------------------------------------------------------------------------

  async #childExited(record: ChildRecord, reason: ExitReason): Promise<void> {
    this.#byRef.delete(record.ref!);
    record.ref = undefined;
    this.#move(record, 'EXITED');
    if (!isCleanExit(reason)) this.#report('supervisor.child_terminated', record, reason);
    if (!shouldRestart(record.spec.restart, reason)) {
      this.#move(record, 'DISCARD');
      if (record.spec.restart === 'temporary' || this.#dynamic) this.#children.delete(record.key);
      return;
    }
    const backoff = record.spec.backoff;
    if (backoff !== undefined && this.#ctx.now() - record.startedAt >= backoff.maxMs) record.backoffLevel = 0;
    if (!this.#countAttempt(record, 'RESTART')) return this.#giveUp(record, reason);
    return this.#traced(record, reason, async () => {
      await this.#stopSiblings(record);
      const delay = backoffDelay(backoff, record.backoffLevel++);
      if (delay > 0) this.#ctx.sendAfter(delay, new RetryRestart(record.key));
      else await this.#startGroup(record);
    });
  }

  /** Runs a restart step inside a `molo.supervisor.restart` span when the system traces; else just runs it. */
  async #traced(record: ChildRecord, reason: ExitReason | undefined, step: () => Promise<void>): Promise<void> {
    const span = this.#ctx.system.observer?.startSpan?.('molo.supervisor.restart', {
      'molo.supervisor': this.#ctx.self,
      'molo.child.id': record.spec.id,
      'molo.exit.reason': reason === undefined ? undefined : formatReason(reason),
      'molo.restart.retry': reason === undefined,
    });
    if (span === undefined) return step();
    try {
      await step();
    } catch (error) {
      span.end(error);
      throw error;
    }
    span.end(undefined, {
      'molo.child.restart_count': record.restartCount,
      'molo.child.running': record.ref !== undefined,
      'molo.child.state': record.state,
    });
  }

  /**
   * Starts every child of `pivot`'s group that is not running, in order. A failed start counts
   * against the intensity and is retried later through the mailbox (OTP's try_again): the retry
   * takes the failed child as its pivot, so under one_for_all the children restarted so far are
   * shut down again before the whole group starts over.
   */
  async #startGroup(pivot: ChildRecord): Promise<void> {
    await this.#stopSiblings(pivot);
    for (const child of this.#groupOf(pivot)) {
      if (child.ref !== undefined) continue;
      const outcome = await this.#startRecord(child, child.state === 'backoff' ? 'RETRY' : 'START');
      if (outcome.ok) continue;
      if (!this.#countAttempt(child, 'START_FAILED')) return this.#giveUp(child, outcome.reason);
      const delay = backoffDelay(child.spec.backoff, child.backoffLevel++);
      if (delay > 0) this.#ctx.sendAfter(delay, new RetryRestart(child.key));
      else this.#ctx.send(this.#ctx.self, new RetryRestart(child.key));
      return;
    }
  }

  /** Stops the running members of `pivot`'s group in reverse order; temporary ones are dropped. */
  async #stopSiblings(pivot: ChildRecord): Promise<void> {
    const group = this.#groupOf(pivot);
    for (let i = group.length - 1; i >= 0; i--) {
      const sibling = group[i]!;
      if (sibling === pivot) continue;
      const stopping = this.#stopRecord(sibling);
      if (stopping !== undefined) await stopping;
      // Temporary children are never restarted, not even as part of a group.
      if (sibling.spec.restart === 'temporary') this.#children.delete(sibling.key);
    }
  }

  #groupOf(pivot: ChildRecord): ChildRecord[] {
    switch (this.settings.strategy) {
      case 'one_for_one':
      case 'simple_one_for_one':
        return [pivot];
      case 'one_for_all':
        return [...this.#children.values()];
      case 'rest_for_one': {
        const all = [...this.#children.values()];
        return all.slice(all.indexOf(pivot));
      }
      default: {
        const unknownStrategy: never = this.settings.strategy;
        throw new Error(`unknown strategy ${String(unknownStrategy)}`);
      }
    }
  }

  /** Moves `record` by a counted event; false when the intensity is exceeded (the child is fatal). */
  #countAttempt(record: ChildRecord, event: 'RESTART' | 'START_FAILED'): boolean {
    const now = this.#ctx.now();
    record.state = nextLifecycleState(record.state, event, () => !this.#restarts.add(now));
    return record.state !== 'fatal';
  }

  #giveUp(record: ChildRecord, reason: ExitReason): void {
    this.#report('supervisor.shutdown', record, reason, { cause: 'reached_max_restart_intensity' });
    this.#ctx.stop('shutdown');
  }

  // ---- the API, answered as calls --------------------------------------------------------

  async #answer(call: CallRequest<SupervisorRequest, SupervisorReply<unknown>>): Promise<void> {
    let reply: SupervisorReply<unknown>;
    try {
      reply = { ok: true, value: await this.#perform(call.request) };
    } catch (error) {
      reply = { ok: false, error: error instanceof Error ? error : new StartFailed(shutdownWith(error)) };
    }
    call.reply(reply);
  }

  #perform(request: SupervisorRequest): unknown {
    switch (request.op) {
      case 'startChild':
        return this.#startChild(request.spec, request.args);
      case 'terminateChild':
        return this.#terminateChild(request.child);
      case 'restartChild':
        return this.#restartChild(request.id);
      case 'deleteChild':
        return this.#deleteChild(request.id);
      case 'whichChildren':
        return this.#whichChildren();
      case 'countChildren':
        return this.#countChildren();
      case 'status':
        return this.#status();
      default: {
        const unknownRequest: never = request;
        throw new Error(`unknown supervisor request ${JSON.stringify(unknownRequest)}`);
      }
    }
  }

  async #startChild(spec: ChildSpec | undefined, args: readonly unknown[]): Promise<Ref | undefined> {
    let resolved: ResolvedChildSpec;
    if (this.#dynamic) {
      resolved = this.settings.children[0]!;
    } else {
      if (spec === undefined) throw new DynamicOnly('startChild with arguments');
      resolved = resolveChildSpec(spec);
      const existing = this.#children.get(resolved.id);
      if (existing !== undefined) {
        if (existing.ref !== undefined) throw new ChildAlreadyStarted(existing.key, existing.ref);
        throw new ChildAlreadyPresent(existing.key);
      }
    }
    // After the checks above: an existing id is reported as such, even at the cap.
    if (this.#children.size >= this.settings.maxChildren) throw new TooManyChildren(this.settings.maxChildren);
    const record = this.#add(resolved, args);
    const outcome = await this.#startRecord(record, 'START');
    if (!outcome.ok) {
      // OTP discards the spec of a child that fails to start.
      this.#children.delete(record.key);
      throw new StartFailed(outcome.reason);
    }
    // OTP keeps no spec for a dynamic or temporary child that answered ignore.
    if (record.ref === undefined && (this.#dynamic || record.spec.restart === 'temporary')) this.#children.delete(record.key);
    return record.ref;
  }

  async #terminateChild(child: string | Ref): Promise<void> {
    const record = typeof child === 'string' ? (this.#dynamic ? undefined : this.#children.get(child)) : this.#byRef.get(child);
    if (record === undefined) throw new ChildNotFound(String(child));
    await this.#stopRecord(record);
    if (this.#dynamic || record.spec.restart === 'temporary') this.#children.delete(record.key);
  }

  async #restartChild(id: string): Promise<Ref | undefined> {
    const record = this.#staticChild(id, 'restartChild');
    if (record.state === 'backoff') throw new ChildRestarting(id);
    if (record.ref !== undefined) throw new ChildRunning(id);
    const outcome = await this.#startRecord(record, 'START');
    if (!outcome.ok) {
      this.#move(record, 'START_REFUSED');
      throw new StartFailed(outcome.reason);
    }
    return record.ref;
  }

  #deleteChild(id: string): void {
    const record = this.#staticChild(id, 'deleteChild');
    if (record.state === 'backoff') throw new ChildRestarting(id);
    if (record.ref !== undefined) throw new ChildRunning(id);
    this.#children.delete(id);
  }

  #staticChild(id: string, operation: string): ChildRecord {
    if (this.#dynamic) throw new DynamicOnly(operation);
    const record = this.#children.get(id);
    if (record === undefined) throw new ChildNotFound(id);
    return record;
  }

  #whichChildren(): ChildEntry[] {
    return [...this.#children.values()].map((record) => ({
      id: this.#dynamic ? undefined : record.key,
      ref: record.state === 'backoff' ? 'restarting' : record.ref,
      type: record.spec.type,
    }));
  }

  #countChildren(): ChildCounts {
    let active = 0;
    let supervisors = 0;
    for (const record of this.#children.values()) {
      if (record.ref !== undefined) active++;
      if (record.spec.type === 'supervisor') supervisors++;
    }
    return { specs: this.#children.size, active, supervisors, workers: this.#children.size - supervisors };
  }

  #status(): SupervisorStatus {
    const inWindow = this.#restarts.count(this.#ctx.now());
    return {
      strategy: this.settings.strategy,
      intensity: this.settings.intensity,
      periodMs: this.settings.periodMs,
      restartsInWindow: inWindow,
      remainingIntensity: Math.max(0, this.settings.intensity - inWindow),
      children: [...this.#children.values()].map((record) => ({
        id: this.#dynamic ? undefined : record.key,
        ref: record.ref,
        state: record.state,
        type: record.spec.type,
        restart: record.spec.restart,
        restartCount: record.restartCount,
      })),
    };
  }

  // ---- starting and stopping one child ---------------------------------------------------

  async #startRecord(record: ChildRecord, event: LifecycleEventType): Promise<StartOutcome> {
    this.#move(record, event);
    const ctx = this.#ctx;
    let ref: Ref | undefined;
    try {
      ref = await record.spec.start({ system: ctx.system, parent: ctx.self, args: record.args });
    } catch (error) {
      const reason = startFailureReason(error);
      this.#report('supervisor.start_error', record, reason);
      return { ok: false, reason };
    }
    if (ref === undefined) {
      this.#move(record, 'IGNORED');
      return { ok: true };
    }
    record.ref = ref;
    this.#byRef.set(ref, record);
    if (record.started) record.restartCount++;
    record.started = true;
    record.startedAt = ctx.now();
    this.#move(record, 'STARTED');
    // Links even if the start function did not; a child already dead then reports `noproc`.
    ctx.link(ref);
    if (record.restartCount > 0) this.#report('supervisor.child_restarted', record, undefined);
    return { ok: true };
  }

  /** Synchronous when the child dies at once (see shutdownChild); a promise otherwise. */
  #stopRecord(record: ChildRecord): void | Promise<void> {
    if (record.state === 'backoff') {
      this.#move(record, 'STOP');
      return;
    }
    const ref = record.ref;
    if (ref === undefined) return;
    this.#move(record, 'STOP');
    this.#byRef.delete(ref);
    record.ref = undefined;
    const exited = shutdownChild(this.#ctx, ref, record.spec.shutdown);
    if (exited instanceof Promise) return exited.then(() => this.#move(record, 'STOPPED'));
    this.#move(record, 'STOPPED');
  }

  async #terminateAll(): Promise<void> {
    if (this.#dynamic) {
      const refs = [...this.#byRef.keys()];
      this.#byRef.clear();
      const template = this.settings.children[0];
      if (template !== undefined && refs.length > 0) await shutdownAll(this.#ctx, refs, template.shutdown);
      this.#children.clear();
      return;
    }
    const children = [...this.#children.values()];
    for (let i = children.length - 1; i >= 0; i--) {
      const stopping = this.#stopRecord(children[i]!);
      if (stopping !== undefined) await stopping;
    }
  }

  #move(record: ChildRecord, event: LifecycleEventType): void {
    record.state = nextLifecycleState(record.state, event);
  }

  #add(spec: ResolvedChildSpec, args: readonly unknown[]): ChildRecord {
    const key = this.#dynamic ? `#${++this.#nextDynamicKey}` : spec.id;
    const record: ChildRecord = {
      key,
      spec,
      args,
      ref: undefined,
      state: 'stopped',
      restartCount: 0,
      started: false,
      backoffLevel: 0,
      startedAt: 0,
    };
    this.#children.set(key, record);
    return record;
  }

  #report(event: string, record: ChildRecord, reason: ExitReason | undefined, extra?: Record<string, unknown>): void {
    const observer = this.#ctx.system.observer;
    const fields = {
      supervisor: this.#ctx.self.toString(),
      supervisorName: this.#ctx.system.info(this.#ctx.self)?.name,
      childId: this.#dynamic ? record.ref?.toString() ?? record.key : record.spec.id,
      childSpecId: record.spec.id,
      reason: reason === undefined ? undefined : formatReason(reason),
      restartCount: record.restartCount,
      ...extra,
    };
    // Nothing observes reports: log them anyway, at their levels (OTP prints supervisor reports by default).
    if (observer?.report === undefined) logReport(this.#ctx.log, event, fields);
    else observer.report(event, fields);
  }
}

function startFailureReason(error: unknown): ExitReason {
  if (error instanceof StartFailed) return error.reason;
  if (error instanceof Error) return error;
  return new StartFailed(shutdownWith(error));
}

import { logReport, reportLevel } from '../telemetry/reports.js';
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
import {
  backoffDelay,
  resolveChildSpec,
  shouldRestart,
  startedChild,
  type AutoShutdown,
  type ChildSpec,
  type ResolvedChildSpec,
  type StartedChild,
} from './child-spec.js';
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
import { childEntry, countChildren, type ChildRecord } from './supervisor-queries.js';
import { resolveSupervisorSpec, type SupervisorSettings } from './supervisor-spec.js';
import {
  IGNORE,
  type ChildCounts,
  type ChildEntry,
  type Strategy,
  type SupervisorModule,
  type SupervisorReply,
  type SupervisorRequest,
  type SupervisorStatus,
} from './supervisor-protocol.js';


/** Sent to itself to retry a failed restart, after the backoff delay (OTP's try_again_restart). */
class RetryRestart {
  constructor(readonly key: string) {}
}


/** OTP's supervisor module form: the settings come from `module.init(args)`, run inside the supervisor. */
export interface SupervisorSource {
  readonly module: SupervisorModule<unknown>;
  readonly args: unknown;
  readonly parent: Ref | undefined;
}

type StartOutcome = { readonly ok: true; readonly extra?: unknown } | { readonly ok: false; readonly reason: ExitReason };

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

  #restarts!: RestartLog;
  settings!: SupervisorSettings;
  /** Set when the init callback answered ignore: the start then resolves with undefined. */
  ignored = false;

  constructor(readonly source: SupervisorSettings | SupervisorSource) {
    if (!('module' in source)) this.#configure(source);
  }

  #configure(settings: SupervisorSettings): void {
    this.settings = settings;
    this.#restarts = new RestartLog(settings.intensity, settings.periodMs);
  }

  get #dynamic(): boolean {
    return this.settings.strategy === 'simple_one_for_one';
  }

  async init(ctx: ActorContext): Promise<void> {
    this.#ctx = ctx;
    ctx.trapExit(true);
    const source = this.source;
    if ('module' in source) {
      // OTP's Mod:init(Args): ignore, a failure or bad flags or specs all fail the start.
      const spec = await source.module.init(source.args);
      if (spec === IGNORE) {
        this.ignored = true;
        ctx.stop('normal');
        return;
      }
      this.#configure(resolveSupervisorSpec(spec, source.parent));
    }
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
    record.lastRef = record.ref;
    record.ref = undefined;
    this.#move(record, 'EXITED');
    if (!isCleanExit(reason)) this.#report('supervisor.child_terminated', record, reason);
    if (!shouldRestart(record.spec.restart, reason)) {
      this.#move(record, 'DISCARD');
      if (record.spec.restart === 'temporary' || this.#dynamic) this.#children.delete(record.key);
      return this.#autoShutdown(record);
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

  /** OTP's do_auto_shutdown: a significant child that exited by itself and stays down may stop the supervisor. */
  #autoShutdown(record: ChildRecord): void {
    const mode = this.settings.autoShutdown;
    if (mode === 'never' || !record.spec.significant) return;
    if (mode === 'all_significant') {
      for (const other of this.#children.values()) if (other.spec.significant && other.ref !== undefined) return;
    }
    this.#report('supervisor.auto_shutdown', record, undefined, { autoShutdown: mode });
    this.#ctx.stop('shutdown');
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
      if (outcome.ok) {
        // OTP drops a dynamic child whose restart answered ignore, as start_child would.
        if (this.#dynamic && child.ref === undefined) this.#children.delete(child.key);
        continue;
      }
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
      reply = { ok: false, error: error instanceof Error ? error : new StartFailed(error === undefined ? 'undefined' : (error as ExitReason)) };
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
      case 'whichChild':
        return childEntry(this.#findChild(request.child, 'whichChild'), this.#dynamic);
      case 'getChildSpec':
        return this.#findChild(request.child, 'getChildSpec').spec;
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

  async #startChild(spec: ChildSpec | undefined, args: readonly unknown[]): Promise<StartedChild> {
    let resolved: ResolvedChildSpec;
    if (this.#dynamic) {
      resolved = this.settings.children[0]!;
    } else {
      if (spec === undefined) throw new DynamicOnly('startChild with arguments');
      resolved = resolveChildSpec(spec, this.settings.autoShutdown);
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
    return { ref: record.ref, extra: outcome.extra };
  }

  /**
   * OTP's find_child: a static child by id (a ref is not an id there: not_found); a dynamic child
   * by ref, also by the ref it had before a restart that is still pending; an id is refused.
   */
  #lookup(child: string | Ref, operation: string): ChildRecord | undefined {
    if (!this.#dynamic) return typeof child === 'string' ? this.#children.get(child) : undefined;
    if (typeof child === 'string') throw new DynamicOnly(`${operation} by id`);
    const record = this.#byRef.get(child);
    if (record !== undefined) return record;
    for (const candidate of this.#children.values()) if (candidate.ref === undefined && candidate.lastRef === child) return candidate;
    return undefined;
  }

  #findChild(child: string | Ref, operation: string): ChildRecord {
    const record = this.#lookup(child, operation);
    if (record === undefined) throw new ChildNotFound(String(child));
    return record;
  }

  async #terminateChild(child: string | Ref): Promise<void> {
    const record = this.#lookup(child, 'terminateChild');
    if (record === undefined) {
      // OTP: a dynamic child that has already exited is terminated, whoever it was.
      if (this.#dynamic && typeof child !== 'string' && !this.#ctx.system.isAlive(child)) return;
      throw new ChildNotFound(String(child));
    }
    await this.#stopRecord(record);
    // Deleting a restarting dynamic child also ends its restart loop: its retry finds nothing.
    if (this.#dynamic || record.spec.restart === 'temporary') this.#children.delete(record.key);
  }

  async #restartChild(id: string): Promise<StartedChild> {
    const record = this.#staticChild(id, 'restartChild');
    if (record.state === 'backoff') throw new ChildRestarting(id);
    if (record.ref !== undefined) throw new ChildRunning(id);
    const outcome = await this.#startRecord(record, 'START');
    if (!outcome.ok) {
      this.#move(record, 'START_REFUSED');
      throw new StartFailed(outcome.reason);
    }
    return { ref: record.ref, extra: outcome.extra };
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
    return [...this.#children.values()].map((record) => childEntry(record, this.#dynamic));
  }

  #countChildren(): ChildCounts {
    return countChildren(this.#children.values(), this.#dynamic);
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
    let extra: unknown;
    try {
      ({ ref, extra } = startedChild(await record.spec.start({ system: ctx.system, parent: ctx.self, args: record.args })));
    } catch (error) {
      const reason = startFailureReason(error);
      this.#report('supervisor.start_error', record, reason);
      return { ok: false, reason };
    }
    if (ref === undefined) {
      this.#move(record, 'IGNORED');
      return { ok: true, extra };
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
    return { ok: true, extra };
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
    if (exited instanceof Promise) {
      return exited.then((reason) => {
        this.#checkShutdown(record, reason);
        this.#move(record, 'STOPPED');
      });
    }
    this.#checkShutdown(record, exited);
    this.#move(record, 'STOPPED');
  }

  /**
   * OTP's shutdown/1 check: a child that exited with another reason than the one asked for (its
   * terminate failed, say) is reported as a shutdown_error; `normal` and `{shutdown, _}` pass for
   * non-permanent children, `killed` for brutal_kill.
   */
  #checkShutdown(record: ChildRecord, reason: ExitReason): void {
    if (reason === 'shutdown' || reason === 'noproc') return;
    if (reason === 'killed' && record.spec.shutdown === 'brutal_kill') return;
    if (record.spec.restart !== 'permanent' && isCleanExit(reason)) return;
    this.#report('supervisor.shutdown_error', record, reason);
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
      lastRef: undefined,
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
    // Building the fields looks up names and formats reasons: skip it when nothing would take them.
    if (observer?.report === undefined && !this.#ctx.log.isLevelEnabled(reportLevel(event))) return;
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

/** A start's rejection is the reason as it is, any value (OTP's `{error, Reason}`); StartFailed unwraps. */
function startFailureReason(error: unknown): ExitReason {
  if (error instanceof StartFailed) return error.reason;
  return error === undefined ? 'undefined' : (error as ExitReason);
}

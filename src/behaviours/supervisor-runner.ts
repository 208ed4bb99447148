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
import { backoffDelay, shouldRestart } from './child-spec.js';
import { RestartLog } from './intensity.js';
import { nextLifecycleState } from './lifecycle.js';
import { StopRequest } from './stop-request.js';
import { answerSupervisorCall } from './supervisor-api.js';
import { ChildTable } from './supervisor-children.js';
import type { ChildRecord } from './supervisor-queries.js';
import { resolveSupervisorSpec, type SupervisorSettings } from './supervisor-spec.js';
import { IGNORE, type SupervisorModule, type SupervisorReply, type SupervisorRequest } from './supervisor-protocol.js';

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

/**
 * The supervisor's logic: children in start order, a restart window, and the child lifecycle
 * table deciding every state change. Runs as a trapping actor.
 */
export class SupervisorRunner implements ActorBehaviour {
  readonly name = 'Supervisor';
  #ctx!: ActorContext;
  /** Made once the settings are known (at once, or from the module's init). */
  #table: ChildTable | undefined = undefined;
  #restarts!: RestartLog;
  settings!: SupervisorSettings;
  /** Set when the init callback answered ignore: the start then resolves with undefined. */
  ignored = false;

  constructor(readonly source: SupervisorSettings | SupervisorSource) {
    if (!('module' in source)) this.#configure(source);
  }

  /** The children table; the runner handles no message before init made it. */
  get #t(): ChildTable {
    return this.#table!;
  }

  #configure(settings: SupervisorSettings): void {
    this.settings = settings;
    this.#restarts = new RestartLog(settings.intensity, settings.periodMs);
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
    const table = (this.#table = new ChildTable(ctx, this.settings));
    if (table.dynamic) return;
    for (const spec of this.settings.children) {
      const record = table.add(spec, []);
      const outcome = await table.start(record, 'START');
      if (!outcome.ok) {
        table.delete(record);
        await table.stopAll();
        ctx.stop(shutdownWith({ failedToStartChild: spec.id, reason: outcome.reason }));
        return;
      }
      // OTP keeps no spec for a temporary child that answered ignore.
      if (record.ref === undefined && spec.restart === 'temporary') table.delete(record);
    }
  }

  handle(ctx: ActorContext, message: Envelope<unknown>): void | Promise<void> {
    const table = this.#t;
    if (message instanceof ExitMessage) {
      if (this.settings.parent !== undefined && message.from === this.settings.parent) return ctx.stop(message.reason);
      const record = table.byRef.get(message.from);
      return record === undefined ? undefined : this.#childExited(table, record, message.reason);
    }
    if (message instanceof CallRequest) {
      return answerSupervisorCall(table, this.#restarts, message as CallRequest<SupervisorRequest, SupervisorReply<unknown>>);
    }
    if (message instanceof RetryRestart) {
      const record = table.children.get(message.key);
      if (record !== undefined && record.state === 'backoff') return this.#traced(record, undefined, () => this.#startGroup(record));
      return;
    }
    if (message instanceof StopRequest) return ctx.stop(message.reason);
    // Stray DOWNs of children already shut down and unknown messages are ignored, as OTP does.
  }

  /** Before the settings are known (the module's init failed or answered ignore) there is no child to stop. */
  terminate(): Promise<void> | undefined {
    return this.#table?.stopAll();
  }

  // ---- restarts --------------------------------------------------------------------------

  async #childExited(table: ChildTable, record: ChildRecord, reason: ExitReason): Promise<void> {
    table.exited(record);
    if (!isCleanExit(reason)) table.report('supervisor.child_terminated', record, reason);
    if (!shouldRestart(record.spec.restart, reason)) {
      table.move(record, 'DISCARD');
      if (record.spec.restart === 'temporary' || table.dynamic) table.delete(record);
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
      for (const other of this.#t.children.values()) if (other.spec.significant && other.ref !== undefined) return;
    }
    this.#t.report('supervisor.auto_shutdown', record, undefined, { autoShutdown: mode });
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
      const outcome = await this.#t.start(child, child.state === 'backoff' ? 'RETRY' : 'START');
      if (outcome.ok) {
        // OTP drops a dynamic child whose restart answered ignore, as start_child would.
        if (this.#t.dynamic && child.ref === undefined) this.#t.delete(child);
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
      const stopping = this.#t.stop(sibling);
      if (stopping !== undefined) await stopping;
      // Temporary children are never restarted, not even as part of a group.
      if (sibling.spec.restart === 'temporary') this.#t.delete(sibling);
    }
  }

  #groupOf(pivot: ChildRecord): ChildRecord[] {
    switch (this.settings.strategy) {
      case 'one_for_one':
      case 'simple_one_for_one':
        return [pivot];
      case 'one_for_all':
        return [...this.#t.children.values()];
      case 'rest_for_one': {
        const all = [...this.#t.children.values()];
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
    this.#t.report('supervisor.shutdown', record, reason, { cause: 'reached_max_restart_intensity' });
    this.#ctx.stop('shutdown');
  }
}

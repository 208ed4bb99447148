import { formatReason, isCleanExit, type ActorContext, type ExitReason, type Ref } from '../actors/index.js';
import { logReport, reportLevel } from '../telemetry/reports.js';
import { startedChild, type ResolvedChildSpec } from './child-spec.js';
import { shutdownAll, shutdownChild } from './child-shutdown.js';
import { StartFailed } from './errors.js';
import { nextLifecycleState, type LifecycleEventType } from './lifecycle.js';
import type { ChildRecord } from './supervisor-queries.js';
import type { SupervisorSettings } from './supervisor-spec.js';

export type StartOutcome = { readonly ok: true; readonly extra?: unknown } | { readonly ok: false; readonly reason: ExitReason };

/**
 * A supervisor's children: the records in start order, the index by ref, starting and stopping
 * one child, and the reports about them. Every state change goes through the lifecycle table.
 * Which children to restart, and when, is the runner's (supervisor-runner.ts).
 */
export class ChildTable {
  /** Every child, in start order (Map keeps insertion order). */
  readonly children = new Map<string, ChildRecord>();
  readonly byRef = new Map<Ref, ChildRecord>();
  #nextDynamicKey = 0;
  /** simple_one_for_one: children are keyed and found by ref, all from the one template. */
  readonly dynamic: boolean;

  constructor(
    readonly ctx: ActorContext,
    readonly settings: SupervisorSettings,
  ) {
    this.dynamic = settings.strategy === 'simple_one_for_one';
  }

  add(spec: ResolvedChildSpec, args: readonly unknown[]): ChildRecord {
    const key = this.dynamic ? `#${++this.#nextDynamicKey}` : spec.id;
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
    this.children.set(key, record);
    return record;
  }

  delete(record: ChildRecord): void {
    this.children.delete(record.key);
  }

  move(record: ChildRecord, event: LifecycleEventType): void {
    record.state = nextLifecycleState(record.state, event);
  }

  /** The running child `record` exited: it is no longer known by its ref. */
  exited(record: ChildRecord): void {
    this.byRef.delete(record.ref!);
    record.lastRef = record.ref;
    record.ref = undefined;
    this.move(record, 'EXITED');
  }

  async start(record: ChildRecord, event: LifecycleEventType): Promise<StartOutcome> {
    this.move(record, event);
    const ctx = this.ctx;
    let ref: Ref | undefined;
    let extra: unknown;
    try {
      ({ ref, extra } = startedChild(await record.spec.start({ system: ctx.system, parent: ctx.self, args: record.args })));
    } catch (error) {
      const reason = startFailureReason(error);
      this.report('supervisor.start_error', record, reason);
      return { ok: false, reason };
    }
    if (ref === undefined) {
      this.move(record, 'IGNORED');
      return { ok: true, extra };
    }
    record.ref = ref;
    this.byRef.set(ref, record);
    if (record.started) record.restartCount++;
    record.started = true;
    record.startedAt = ctx.now();
    this.move(record, 'STARTED');
    // Links even if the start function did not; a child already dead then reports `noproc`.
    ctx.link(ref);
    if (record.restartCount > 0) this.report('supervisor.child_restarted', record, undefined);
    return { ok: true, extra };
  }

  /** Synchronous when the child dies at once (see shutdownChild); a promise otherwise. */
  stop(record: ChildRecord): void | Promise<void> {
    if (record.state === 'backoff') {
      this.move(record, 'STOP');
      return;
    }
    const ref = record.ref;
    if (ref === undefined) return;
    this.move(record, 'STOP');
    this.byRef.delete(ref);
    record.ref = undefined;
    const exited = shutdownChild(this.ctx, ref, record.spec.shutdown);
    if (exited instanceof Promise) {
      return exited.then((reason) => {
        this.#checkShutdown(record, reason);
        this.move(record, 'STOPPED');
      });
    }
    this.#checkShutdown(record, exited);
    this.move(record, 'STOPPED');
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
    this.report('supervisor.shutdown_error', record, reason);
  }

  /** Stops every child, newest first (dynamic children all at once, as OTP does). */
  async stopAll(): Promise<void> {
    if (this.dynamic) {
      const refs = [...this.byRef.keys()];
      this.byRef.clear();
      const template = this.settings.children[0];
      if (template !== undefined && refs.length > 0) await shutdownAll(this.ctx, refs, template.shutdown);
      this.children.clear();
      return;
    }
    const children = [...this.children.values()];
    for (let i = children.length - 1; i >= 0; i--) {
      const stopping = this.stop(children[i]!);
      if (stopping !== undefined) await stopping;
    }
  }

  report(event: string, record: ChildRecord, reason: ExitReason | undefined, extra?: Record<string, unknown>): void {
    const ctx = this.ctx;
    const observer = ctx.system.observer;
    // Building the fields looks up names and formats reasons: skip it when nothing would take them.
    if (observer?.report === undefined && !ctx.log.isLevelEnabled(reportLevel(event))) return;
    const fields = {
      supervisor: ctx.self.toString(),
      supervisorName: ctx.system.info(ctx.self)?.name,
      childId: this.dynamic ? record.ref?.toString() ?? record.key : record.spec.id,
      childSpecId: record.spec.id,
      reason: reason === undefined ? undefined : formatReason(reason),
      restartCount: record.restartCount,
      ...extra,
    };
    // Nothing observes reports: log them anyway, at their levels (OTP prints supervisor reports by default).
    if (observer?.report === undefined) logReport(ctx.log, event, fields);
    else observer.report(event, fields);
  }
}

/** A start's rejection is the reason as it is, any value (OTP's `{error, Reason}`); StartFailed unwraps. */
function startFailureReason(error: unknown): ExitReason {
  if (error instanceof StartFailed) return error.reason;
  return error === undefined ? 'undefined' : (error as ExitReason);
}

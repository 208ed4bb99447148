/**
 * The program supervisor actor: supervisord's semantics on the child lifecycle table. This file is
 * the GenServer's dispatch: calls (status, start, stop, restart) and the internal messages
 * (process events, timers, probe results), each handed to the code of its concern. Each program is
 * a plain record (program-record.ts) whose state changes only through `move`
 * (program-transitions.ts); runs, exits and stops are in program-runs.ts, health checks in
 * program-health.ts, status snapshots in program-status.ts, and stopping everything in
 * program-shutdown.ts. Process callbacks, probes and timers all reach the actor as messages; timers
 * are the actor's own (`ctx.sendAfter`), so the injected clock drives them and they die with the actor.
 */
import type { ExitReason } from '../../actors/index.js';
import { ProgramAlreadyStarted, ProgramNotFound } from '../errors.js';
import { GenServer, NO_REPLY, type From, type NoReply } from '../gen-server.js';
import { probeFinished, probeTimedOut, runProbe, type ProbeVerdict } from './program-health.js';
import { programHost, type ProgramHost } from './program-host.js';
import { createProgramRecord, takeFiredTimer, type ProgramRecord, unknownState } from './program-record.js';
import { killAfterStopTimeout, manualSpawn, processExited, retry, spawn, spawnFailed, stopProgram } from './program-runs.js';
import { killEveryProgram, stopEveryProgram } from './program-shutdown.js';
import { programStatus, supervisorStatus } from './program-status.js';
import { move } from './program-transitions.js';
import { okReply, ProbeFinished, ProcessExited, SpawnFailed, TimerFired, type ProgramReply, type ProgramRequest, type TimerKind } from './protocol.js';
import type { ResolvedProgramSupervisorSpec } from './spec.js';

type AnyReply = ProgramReply<unknown>;

export class ProgramSupervisorServer extends GenServer<ProgramRequest, AnyReply, never, unknown> {
  readonly #programs = new Map<string, ProgramRecord>();
  /** Set in `init`, where the actor context is first available. */
  #host!: ProgramHost;

  constructor(readonly settings: ResolvedProgramSupervisorSpec) {
    super();
  }

  override init(): void {
    this.#host = programHost(this.ctx, this.settings.maxLineBytes);
    // The last line of defence: however this actor exits (killed, system shutdown), no process survives it.
    this.ctx.signal.addEventListener('abort', () => killEveryProgram(this.#programs.values()), { once: true });
    // Default: the system's logger (pino), so program lines and every other report share one format.
    const logger = this.settings.logger ?? this.ctx.log;
    for (const spec of this.settings.programs) this.#programs.set(spec.name, createProgramRecord(spec, logger));
    for (const record of this.#programs.values()) if (record.spec.autostart) spawn(this.#host, record, 'START');
  }

  // ---- calls ------------------------------------------------------------------------------

  override handleCall(request: ProgramRequest, from: From<AnyReply>): AnyReply | NoReply {
    try {
      switch (request.op) {
        case 'status':
          return okReply(supervisorStatus(this.#host, this.settings.maxPrograms, this.#programs.values()));
        case 'start':
          return this.#manualStart(this.#program(request.name), from);
        case 'stop':
          return this.#manualStop(this.#program(request.name), from);
        case 'restart':
          return this.#manualRestart(this.#program(request.name), from);
        case 'logs':
          return okReply({ name: request.name, ...this.#program(request.name).tail.last(request.lines) });
        default: {
          const unknownRequest: never = request;
          throw new Error(`unknown program supervisor request ${JSON.stringify(unknownRequest)}`);
        }
      }
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
    }
  }

  #program(name: string): ProgramRecord {
    const record = this.#programs.get(name);
    if (record === undefined) throw new ProgramNotFound(name);
    return record;
  }

  #manualStart(record: ProgramRecord, from: From<AnyReply>): NoReply {
    const { state } = record;
    if (state === 'starting' || state === 'running' || state === 'backoff') throw new ProgramAlreadyStarted(record.spec.name, state);
    record.waiters.push({ from, until: 'started' });
    if (state === 'stopping') record.startAfterStop = true;
    else manualSpawn(this.#host, record);
    return NO_REPLY;
  }

  #manualStop(record: ProgramRecord, from: From<AnyReply>): AnyReply | NoReply {
    record.startAfterStop = false;
    if (record.state === 'stopped' || record.state === 'fatal') return okReply(programStatus(this.#host, record));
    record.waiters.push({ from, until: 'stopped' });
    stopProgram(this.#host, record, 'stop');
    return NO_REPLY;
  }

  #manualRestart(record: ProgramRecord, from: From<AnyReply>): NoReply {
    record.waiters.push({ from, until: 'started' });
    switch (record.state) {
      case 'stopped':
      case 'fatal':
        manualSpawn(this.#host, record);
        break;
      case 'backoff':
      case 'starting':
      case 'running':
      case 'stopping':
        // Started again once stopped (at once from backoff, which has no process to wait for).
        record.startAfterStop = true;
        stopProgram(this.#host, record, 'stop');
        break;
      case 'exited':
        // Never observed between messages: an exit is decided in the handler that saw it.
        throw new Error(`program '${record.spec.name}' is in a transient state`);
      default:
        unknownState(record.state);
    }
    return NO_REPLY;
  }

  // ---- messages ---------------------------------------------------------------------------

  override handleInfo(message: unknown): void {
    if (message instanceof ProcessExited) {
      const record = this.#currentRun(message);
      if (record !== undefined) processExited(this.#host, record, message.code, message.signal);
    } else if (message instanceof SpawnFailed) {
      const record = this.#currentRun(message);
      if (record !== undefined) spawnFailed(this.#host, record, message.error);
    } else if (message instanceof TimerFired) {
      const record = this.#programs.get(message.program);
      if (record !== undefined && takeFiredTimer(record, message)) this.#timerFired(record, message.kind);
    } else if (message instanceof ProbeFinished) {
      const record = this.#programs.get(message.program);
      if (record !== undefined) this.#afterProbe(record, probeFinished(this.#host, record, message));
    }
    // Anything else (EXITs of actors linked by someone else, strays) is ignored.
  }

  /** The program a process event is about, if the event is of its current run (older runs' events are stale). */
  #currentRun(message: ProcessExited | SpawnFailed): ProgramRecord | undefined {
    const record = this.#programs.get(message.program);
    return record !== undefined && message.runId === record.runId ? record : undefined;
  }

  #timerFired(record: ProgramRecord, kind: TimerKind): void {
    switch (kind) {
      case 'retry':
        if (record.state === 'backoff') retry(this.#host, record);
        return;
      case 'startup':
        if (record.state === 'starting' && record.process?.alive) move(this.#host, record, 'STARTED');
        return;
      case 'kill':
        if (record.process?.alive) killAfterStopTimeout(record);
        return;
      case 'probe':
        runProbe(this.#host, record);
        return;
      case 'probeTimeout':
        this.#afterProbe(record, probeTimedOut(this.#host, record));
        return;
      default: {
        const unknownKind: never = kind;
        throw new Error(`unknown timer ${String(unknownKind)}`);
      }
    }
  }

  #afterProbe(record: ProgramRecord, verdict: ProbeVerdict): void {
    if (verdict === 'restart') stopProgram(this.#host, record, 'unhealthy');
  }

  // ---- shutdown --------------------------------------------------------------------------

  /** Stops every program and waits for them (see `stopEveryProgram`); calls still queued fail when the actor exits. */
  override async terminate(_reason: ExitReason): Promise<void> {
    await stopEveryProgram(this.#host, this.#programs.values(), this.ctx);
  }
}

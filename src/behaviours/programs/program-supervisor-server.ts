/**
 * The program supervisor actor: supervisord's semantics on the child lifecycle table. Each
 * program is a plain record; every state change goes through `#move`, which consults
 * `nextLifecycleState` (so an illegal transition throws instead of happening) and starts or
 * cancels what belongs to the states it leaves and enters (timers, health checks, waiting callers).
 * Process exits, probe results and timers all arrive as messages; timers are the actor's own
 * (`ctx.sendAfter`), so the injected clock drives them and they die with the actor.
 */
import { RECEIVE_TIMEOUT, type ExitReason, type TimerEntry } from '../../actors/index.js';
import { ProgramAlreadyStarted, ProgramNotFound } from '../errors.js';
import { GenServer, NO_REPLY, type From, type NoReply } from '../gen-server.js';
import { addRestart, restartsInWindow } from '../intensity.js';
import { nextLifecycleState, type LifecycleEventType, type LifecycleState } from '../lifecycle.js';
import { startProbe, type ProbeHandle, type ProbeOutcome } from './health-probe.js';
import { childLogger, jsonLineLogger, safeLog, type ProgramLogger } from './logger.js';
import { ProgramProcess } from './program-process.js';
import {
  ProbeFinished,
  ProcessExited,
  SpawnFailed,
  TimerFired,
  type ProgramExitCause,
  type ProgramExitInfo,
  type ProgramHealth,
  type ProgramReply,
  type ProgramRequest,
  type ProgramStatus,
  type ProgramSupervisorStatus,
  type TimerKind,
} from './protocol.js';
import { isFailedExit, restartDelay, restartsAfterExit } from './restart-policy.js';
import type { ResolvedProgramSpec, ResolvedProgramSupervisorSpec } from './spec.js';

/** After SIGKILL, how long terminate waits for the exit before giving up on a process (it is in the kernel's hands then). */
export const KILL_WAIT_MS = 5_000;
const MAX_ERROR_TEXT = 512;

interface ArmedTimer {
  readonly entry: TimerEntry;
  readonly message: TimerFired;
}

/** A caller of start/stop/restart, answered when the program reaches a settled state. */
interface Waiter {
  readonly from: From<ProgramReply<unknown>>;
  readonly until: 'started' | 'stopped';
}

interface ProgramRecord {
  readonly spec: ResolvedProgramSpec;
  readonly log: ProgramLogger;
  state: LifecycleState;
  process: ProgramProcess | undefined;
  /** Incremented per spawn; process events of an earlier run are ignored. */
  runId: number;
  /** Restart and failed-start times in the clock's ms, for `addRestart`. */
  restarts: readonly number[];
  totalRestarts: number;
  /** Restarts in a row, for the backoff delay; reset once a run lasts `backoff.maxMs`. */
  backoffLevel: number;
  spawnedAt: number;
  lastExit: ProgramExitInfo | undefined;
  /** In backoff: when the retry is due (clock ms). */
  retryAt: number | undefined;
  readonly timers: Map<TimerKind, ArmedTimer>;
  probe: ProbeHandle | undefined;
  probeId: number;
  health: ProgramHealth;
  probeFailures: number;
  /** Why the supervisor signalled the current process, if it did. */
  stopCause: 'stop' | 'unhealthy' | undefined;
  /** A restart asked for by hand: start again once stopped. */
  startAfterStop: boolean;
  waiters: Waiter[];
}

type AnyReply = ProgramReply<unknown>;

const ok = (value: unknown): AnyReply => ({ ok: true, value });

export class ProgramSupervisorServer extends GenServer<ProgramRequest, AnyReply, never, unknown> {
  readonly #programs = new Map<string, ProgramRecord>();
  readonly #logger: ProgramLogger;

  constructor(readonly settings: ResolvedProgramSupervisorSpec) {
    super();
    this.#logger = settings.logger ?? jsonLineLogger();
  }

  override init(): void {
    // The last line of defence: however this actor exits (killed, system shutdown), no process survives it.
    this.ctx.signal.addEventListener('abort', () => this.#killEverything(), { once: true });
    for (const spec of this.settings.programs) {
      const record: ProgramRecord = {
        spec,
        log: childLogger(this.#logger, { program: spec.name }),
        state: 'stopped',
        process: undefined,
        runId: 0,
        restarts: [],
        totalRestarts: 0,
        backoffLevel: 0,
        spawnedAt: 0,
        lastExit: undefined,
        retryAt: undefined,
        timers: new Map(),
        probe: undefined,
        probeId: 0,
        health: 'unchecked',
        probeFailures: 0,
        stopCause: undefined,
        startAfterStop: false,
        waiters: [],
      };
      this.#programs.set(spec.name, record);
    }
    for (const record of this.#programs.values()) if (record.spec.autostart) this.#spawn(record, 'START');
  }

  // ---- calls ------------------------------------------------------------------------------

  override handleCall(request: ProgramRequest, from: From<AnyReply>): AnyReply | NoReply {
    try {
      switch (request.op) {
        case 'status':
          return ok(this.#status());
        case 'start':
          return this.#manualStart(this.#program(request.name), from);
        case 'stop':
          return this.#manualStop(this.#program(request.name), from);
        case 'restart':
          return this.#manualRestart(this.#program(request.name), from);
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
    else this.#manualSpawn(record);
    return NO_REPLY;
  }

  #manualStop(record: ProgramRecord, from: From<AnyReply>): AnyReply | NoReply {
    record.startAfterStop = false;
    if (record.state === 'stopped' || record.state === 'fatal') return ok(this.#programStatus(record));
    record.waiters.push({ from, until: 'stopped' });
    this.#stop(record, 'stop');
    return NO_REPLY;
  }

  #manualRestart(record: ProgramRecord, from: From<AnyReply>): NoReply {
    record.waiters.push({ from, until: 'started' });
    switch (record.state) {
      case 'stopped':
      case 'fatal':
        this.#manualSpawn(record);
        break;
      case 'backoff':
        record.startAfterStop = true;
        this.#stop(record, 'stop');
        break;
      case 'starting':
      case 'running':
      case 'stopping':
        record.startAfterStop = true;
        this.#stop(record, 'stop');
        break;
      case 'exited':
        // Never observed between messages: an exit is decided in the handler that saw it.
        throw new Error(`program '${record.spec.name}' is in a transient state`);
      default: {
        const unknownState: never = record.state;
        throw new Error(`unknown state ${String(unknownState)}`);
      }
    }
    return NO_REPLY;
  }

  /** A start asked for by hand is a fresh decision: the restart window and the backoff start over. */
  #manualSpawn(record: ProgramRecord): void {
    record.restarts = [];
    record.backoffLevel = 0;
    this.#spawn(record, 'START');
  }

  // ---- messages ---------------------------------------------------------------------------

  override handleInfo(message: unknown): void {
    if (message instanceof ProcessExited) {
      const record = this.#programs.get(message.program);
      if (record !== undefined && message.runId === record.runId) this.#processExited(record, message.code, message.signal);
    } else if (message instanceof SpawnFailed) {
      const record = this.#programs.get(message.program);
      if (record !== undefined && message.runId === record.runId) this.#spawnFailed(record, message.error);
    } else if (message instanceof TimerFired) {
      const record = this.#programs.get(message.program);
      if (record === undefined || record.timers.get(message.kind)?.message !== message) return; // stale
      record.timers.delete(message.kind);
      this.#timerFired(record, message.kind);
    } else if (message instanceof ProbeFinished) {
      const record = this.#programs.get(message.program);
      if (record === undefined || record.probe === undefined || message.probeId !== record.probeId) return;
      record.probe = undefined;
      this.#disarm(record, 'probeTimeout');
      this.#probeResult(record, message.outcome);
    }
    // Anything else (EXITs of actors linked by someone else, strays) is ignored.
  }

  #timerFired(record: ProgramRecord, kind: TimerKind): void {
    switch (kind) {
      case 'retry':
        if (record.state === 'backoff') {
          record.totalRestarts++;
          this.#spawn(record, 'RETRY');
        }
        return;
      case 'startup':
        if (record.state === 'starting' && record.process?.alive) this.#move(record, 'STARTED');
        return;
      case 'kill':
        if (record.process?.alive) {
          safeLog(record.log, 'warn', { event: 'kill', pid: record.process.pid }, `killing '${record.spec.name}' with SIGKILL: still alive ${record.spec.stopTimeoutMs} ms after ${record.spec.stopSignal}`);
          record.process.signal('SIGKILL');
        }
        return;
      case 'probe':
        this.#runProbe(record);
        return;
      case 'probeTimeout':
        record.probe?.cancel();
        record.probe = undefined;
        this.#probeResult(record, { healthy: false, detail: 'timeout' });
        return;
      default: {
        const unknownKind: never = kind;
        throw new Error(`unknown timer ${String(unknownKind)}`);
      }
    }
  }

  // ---- starting, exits, restarts --------------------------------------------------------

  #spawn(record: ProgramRecord, event: 'START' | 'RETRY'): void {
    this.#move(record, event);
    record.health = 'unchecked';
    record.probeFailures = 0;
    record.stopCause = undefined;
    const runId = ++record.runId;
    const { name } = record.spec;
    const { system, self } = this.ctx;
    // Process callbacks run outside the actor: they only post messages (a dead actor's are dropped).
    const post = (message: unknown): void => {
      try {
        system.send(self, message);
      } catch {
        // A full mailbox (100,000 messages by default) loses the event; nothing may throw into the event loop.
      }
    };
    let process: ProgramProcess;
    try {
      process = new ProgramProcess(record.spec, record.log, this.settings.maxLineBytes, {
        spawnFailed: (error) => post(new SpawnFailed(name, runId, error)),
        exited: (code, signal) => post(new ProcessExited(name, runId, code, signal)),
      });
    } catch (error) {
      // Node throws synchronously for some bad arguments; handled like any failed spawn, through the mailbox.
      post(new SpawnFailed(name, runId, error instanceof Error ? error : new Error(String(error))));
      return;
    }
    record.process = process;
    if (process.pid === undefined) return; // the spawn error follows as a message
    record.spawnedAt = this.ctx.now();
    safeLog(record.log, 'info', { event: 'spawned', pid: process.pid }, `spawned: '${name}' with pid ${process.pid}`);
    if (record.spec.startMs === 0) this.#move(record, 'STARTED');
    else this.#arm(record, 'startup', record.spec.startMs);
  }

  #spawnFailed(record: ProgramRecord, error: Error): void {
    record.process = undefined;
    const code = (error as NodeJS.ErrnoException).code;
    record.lastExit = this.#exitInfo(null, null, 'spawn-error', truncate(code ?? error.message));
    safeLog(record.log, 'error', { event: 'spawn-failed', error: record.lastExit.error }, `spawnerr: '${record.spec.name}' could not be spawned: ${error.message}`);
    if (record.state === 'starting') this.#countFailure(record, 'START_FAILED');
    else if (record.state === 'stopping') this.#stopped(record);
  }

  #processExited(record: ProgramRecord, code: number | null, signal: NodeJS.Signals | null): void {
    const pid = record.process?.pid;
    record.process = undefined;
    this.#disarm(record, 'kill');
    const failed = isFailedExit(code, signal);
    const status = signal === null ? `exit status ${code}` : `terminated by ${signal}`;
    switch (record.state) {
      case 'starting': {
        record.lastExit = this.#exitInfo(code, signal, 'exit');
        safeLog(record.log, 'warn', { event: 'exited', pid, code, signal }, `exited: '${record.spec.name}' (${status}) before it counted as started (startMs ${record.spec.startMs})`);
        this.#countFailure(record, 'START_FAILED');
        return;
      }
      case 'running': {
        const cause: ProgramExitCause = record.stopCause === 'unhealthy' ? 'unhealthy' : 'exit';
        record.lastExit = this.#exitInfo(code, signal, cause);
        // A kill for failed health checks is a failure whatever the exit status says.
        const restart = restartsAfterExit(record.spec.restart, failed || cause === 'unhealthy');
        const expected = !failed && cause === 'exit';
        safeLog(record.log, expected ? 'info' : 'warn', { event: 'exited', pid, code, signal, cause }, `exited: '${record.spec.name}' (${status}; ${expected ? 'expected' : 'not expected'})`);
        this.#move(record, 'EXITED');
        if (restart) this.#countFailure(record, 'RESTART');
        else this.#move(record, 'DISCARD');
        return;
      }
      case 'stopping':
        record.lastExit = this.#exitInfo(code, signal, 'stop');
        safeLog(record.log, 'info', { event: 'stopped', pid, code, signal }, `stopped: '${record.spec.name}' (${status})`);
        this.#stopped(record);
        return;
      case 'stopped':
      case 'backoff':
      case 'exited':
      case 'fatal':
        // The current run has no process in these states: cannot happen, and changes nothing.
        return;
      default: {
        const unknownState: never = record.state;
        throw new Error(`unknown state ${String(unknownState)}`);
      }
    }
  }

  /**
   * A restart or a failed start: counted against the program's own budget (`addRestart`) by the
   * lifecycle guard, which leads to `backoff`, or to `fatal` once the budget is spent.
   */
  #countFailure(record: ProgramRecord, event: 'RESTART' | 'START_FAILED'): void {
    const now = this.ctx.now();
    const { spec } = record;
    this.#move(record, event, () => {
      const window = addRestart(record.restarts, now, spec.maxRestarts, spec.windowMs);
      record.restarts = window.restarts;
      return !window.exceeded;
    });
    if (record.state === 'fatal') {
      safeLog(record.log, 'error', { event: 'fatal', maxRestarts: spec.maxRestarts, windowMs: spec.windowMs }, `gave up: '${spec.name}' entered fatal state, more than ${spec.maxRestarts} restarts within ${spec.windowMs} ms`);
      return;
    }
    // A run that lasted long enough starts the doubling over.
    if (event === 'RESTART' && now - record.spawnedAt >= spec.backoff.maxMs) record.backoffLevel = 0;
    const delay = restartDelay(spec.backoff, record.backoffLevel++);
    safeLog(record.log, 'info', { event: 'backoff', delayMs: delay }, `backoff: '${spec.name}' restarts in ${delay} ms`);
    if (delay === 0) {
      record.totalRestarts++;
      this.#spawn(record, 'RETRY');
      return;
    }
    record.retryAt = now + delay;
    this.#arm(record, 'retry', delay);
  }

  // ---- stopping --------------------------------------------------------------------------

  /** Stops a program (cause `stop`), or kills a running one that failed its health checks (cause `unhealthy`: its exit is then a failure). */
  #stop(record: ProgramRecord, cause: 'stop' | 'unhealthy'): void {
    switch (record.state) {
      case 'backoff':
        this.#move(record, 'STOP');
        this.#stopped(record);
        return;
      case 'starting':
        this.#move(record, 'STOP');
        break;
      case 'running':
        if (cause === 'stop') this.#move(record, 'STOP');
        break;
      case 'stopping':
      case 'stopped':
      case 'exited':
      case 'fatal':
        return;
      default: {
        const unknownState: never = record.state;
        throw new Error(`unknown state ${String(unknownState)}`);
      }
    }
    record.stopCause = cause;
    this.#stopHealthChecks(record);
    const process = record.process;
    if (process === undefined || process.pid === undefined) return; // a spawn failure is on its way: it ends the stop
    process.signal(record.spec.stopSignal);
    if (!record.timers.has('kill')) this.#arm(record, 'kill', record.spec.stopTimeoutMs);
  }

  /** Ends a stop; a manual restart then starts the program again. */
  #stopped(record: ProgramRecord): void {
    if (record.state === 'stopping') this.#move(record, 'STOPPED');
    if (record.startAfterStop && record.state === 'stopped') {
      record.startAfterStop = false;
      this.#manualSpawn(record);
    }
  }

  // ---- health checks ----------------------------------------------------------------------

  #runProbe(record: ProgramRecord): void {
    const check = record.spec.health;
    if (check === undefined || record.state !== 'running' || record.stopCause !== undefined) return;
    const probeId = ++record.probeId;
    const { system, self } = this.ctx;
    const name = record.spec.name;
    const post = (outcome: ProbeOutcome): void => {
      try {
        system.send(self, new ProbeFinished(name, probeId, outcome));
      } catch {
        // See #spawn: lost, and the probe timeout counts it as a failure.
      }
    };
    try {
      record.probe = startProbe(check, post);
    } catch (error) {
      // A probe that cannot even be started has failed; the result comes through the mailbox like any other.
      record.probe = { cancel: () => {} };
      post({ healthy: false, detail: error instanceof Error ? error.message : String(error) });
    }
    this.#arm(record, 'probeTimeout', check.timeoutMs);
  }

  #probeResult(record: ProgramRecord, outcome: ProbeOutcome): void {
    const check = record.spec.health;
    if (check === undefined || record.state !== 'running' || record.stopCause !== undefined) return;
    if (outcome.healthy) {
      if (record.health === 'unhealthy') safeLog(record.log, 'info', { event: 'healthy' }, `healthy: '${record.spec.name}' passes its health check again`);
      record.health = 'healthy';
      record.probeFailures = 0;
    } else {
      record.probeFailures++;
      if (record.probeFailures >= check.failures && record.health !== 'unhealthy') {
        record.health = 'unhealthy';
        safeLog(
          record.log,
          'warn',
          { event: 'unhealthy', failures: record.probeFailures, detail: outcome.detail, action: check.onUnhealthy },
          `unhealthy: '${record.spec.name}' failed ${record.probeFailures} health checks in a row (${outcome.detail ?? 'failed'})`,
        );
        if (check.onUnhealthy === 'restart') {
          this.#stop(record, 'unhealthy');
          return;
        }
      }
    }
    this.#arm(record, 'probe', check.intervalMs);
  }

  #stopHealthChecks(record: ProgramRecord): void {
    record.probe?.cancel();
    record.probe = undefined;
    this.#disarm(record, 'probe');
    this.#disarm(record, 'probeTimeout');
  }

  // ---- the one place where states change --------------------------------------------------

  #move(record: ProgramRecord, event: LifecycleEventType, guard?: () => boolean): void {
    const from = record.state;
    const to = nextLifecycleState(from, event, guard);
    record.state = to;
    if (from === to) return;
    if (from === 'backoff') {
      this.#disarm(record, 'retry');
      record.retryAt = undefined;
    }
    if (from === 'starting') this.#disarm(record, 'startup');
    if (from === 'running') this.#stopHealthChecks(record);
    if (to === 'running' && record.spec.health !== undefined) this.#arm(record, 'probe', record.spec.health.intervalMs);
    if (to === 'stopped' || to === 'fatal') this.#disarm(record, 'kill');
    this.#answerWaiters(record);
  }

  #answerWaiters(record: ProgramRecord): void {
    if (record.waiters.length === 0) return;
    const { state } = record;
    const started = state === 'running' || state === 'backoff' || state === 'fatal' || (state === 'stopped' && !record.startAfterStop);
    const stopped = state === 'stopped' || state === 'fatal';
    if (!started && !stopped) return;
    const remaining: Waiter[] = [];
    let status: ProgramStatus | undefined;
    for (const waiter of record.waiters) {
      if (waiter.until === 'started' ? started : stopped) waiter.from.reply(ok((status ??= this.#programStatus(record))));
      else remaining.push(waiter);
    }
    record.waiters = remaining;
  }

  // ---- timers ----------------------------------------------------------------------------

  #arm(record: ProgramRecord, kind: TimerKind, delayMs: number): void {
    this.#disarm(record, kind);
    const message = new TimerFired(record.spec.name, kind);
    record.timers.set(kind, { entry: this.ctx.sendAfter(delayMs, message), message });
  }

  #disarm(record: ProgramRecord, kind: TimerKind): void {
    const armed = record.timers.get(kind);
    if (armed === undefined) return;
    record.timers.delete(kind);
    this.ctx.cancelTimer(armed.entry);
  }

  // ---- status ----------------------------------------------------------------------------

  #status(): ProgramSupervisorStatus {
    return { maxPrograms: this.settings.maxPrograms, programs: [...this.#programs.values()].map((record) => this.#programStatus(record)) };
  }

  #programStatus(record: ProgramRecord): ProgramStatus {
    const now = this.ctx.now();
    const retryIn = record.retryAt === undefined ? undefined : Math.max(0, record.retryAt - now);
    return {
      name: record.spec.name,
      state: record.state,
      pid: record.process?.pid,
      restart: record.spec.restart,
      restartsInWindow: restartsInWindow(record.restarts, now, record.spec.windowMs),
      maxRestarts: record.spec.maxRestarts,
      windowMs: record.spec.windowMs,
      totalRestarts: record.totalRestarts,
      health: record.health,
      probeFailures: record.probeFailures,
      lastExit: record.lastExit,
      nextRetryAt: retryIn === undefined ? undefined : this.ctx.system.clock.wallNow() + retryIn,
      nextRetryInMs: retryIn,
      uptimeMs: record.state === 'running' ? now - record.spawnedAt : undefined,
    };
  }

  #exitInfo(code: number | null, signal: string | null, cause: ProgramExitCause, error?: string): ProgramExitInfo {
    const info = { code, signal, cause, at: this.ctx.system.clock.wallNow() };
    return error === undefined ? info : { ...info, error };
  }

  // ---- shutdown --------------------------------------------------------------------------

  /**
   * Stops every program at once: the stop signal to each, SIGKILL to those still alive after their
   * `stopTimeoutMs`, and waits for every exit (at most KILL_WAIT_MS after a SIGKILL). Process
   * events are taken by selective receive; calls still queued fail when the actor exits.
   */
  override async terminate(_reason: ExitReason): Promise<void> {
    interface Pending {
      readonly record: ProgramRecord;
      deadline: number;
      killed: boolean;
    }
    const pending = new Map<string, Pending>();
    const now = this.ctx.now();
    for (const record of this.#programs.values()) {
      record.startAfterStop = false;
      this.#stopHealthChecks(record);
      this.#disarm(record, 'retry');
      this.#disarm(record, 'startup');
      this.#disarm(record, 'kill');
      if (record.state === 'backoff') this.#move(record, 'STOP');
      if (record.state === 'starting' || record.state === 'running') this.#move(record, 'STOP');
      if (record.state !== 'stopping') continue;
      const alive = record.process?.alive === true;
      if (alive) record.process!.signal(record.spec.stopSignal);
      // No process yet means its spawn failure is queued: wait for it briefly.
      pending.set(record.spec.name, { record, deadline: now + (alive ? record.spec.stopTimeoutMs : KILL_WAIT_MS), killed: !alive });
    }
    const isProcessEnd = (message: unknown): message is ProcessExited | SpawnFailed =>
      message instanceof ProcessExited || message instanceof SpawnFailed;
    while (pending.size > 0) {
      let earliest = Infinity;
      for (const entry of pending.values()) earliest = Math.min(earliest, entry.deadline);
      const message = await this.ctx.receive(isProcessEnd, Math.max(0, earliest - this.ctx.now()));
      if (message === RECEIVE_TIMEOUT) {
        const at = this.ctx.now();
        for (const [name, entry] of pending) {
          if (entry.deadline > at) continue;
          if (entry.killed) {
            safeLog(entry.record.log, 'error', { event: 'lost', pid: entry.record.process?.pid }, `'${name}' did not exit ${KILL_WAIT_MS} ms after SIGKILL`);
            pending.delete(name);
            continue;
          }
          safeLog(entry.record.log, 'warn', { event: 'kill', pid: entry.record.process?.pid }, `killing '${name}' with SIGKILL: still alive ${entry.record.spec.stopTimeoutMs} ms after ${entry.record.spec.stopSignal}`);
          entry.record.process?.signal('SIGKILL');
          entry.killed = true;
          entry.deadline = at + KILL_WAIT_MS;
        }
        continue;
      }
      const entry = pending.get(message.program);
      if (entry === undefined || message.runId !== entry.record.runId) continue;
      pending.delete(message.program);
      if (message instanceof SpawnFailed) this.#spawnFailed(entry.record, message.error);
      else this.#processExited(entry.record, message.code, message.signal);
    }
  }

  #killEverything(): void {
    for (const record of this.#programs.values()) {
      record.probe?.cancel();
      record.probe = undefined;
      if (record.process?.alive) record.process.signal('SIGKILL');
    }
  }
}

function truncate(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}…`;
}

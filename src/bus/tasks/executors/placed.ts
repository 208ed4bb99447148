/**
 * The `thread` and `process` executors: the handlers module runs in a placement host of the
 * executor's own, so the hard timeout can end it. At `timeout_hard_ms` the host is terminated
 * (terminateHost: worker.terminate() or SIGKILL to its process group, which a busy host cannot
 * ignore), the run rejects with TaskHardTimeout and a fresh host is started at once, so the worker
 * is ready for its next task. A host that dies otherwise (a crash, out of memory) fails its runs
 * and is replaced on the next.
 *
 * Up to `prefetch` runs go on at once. Runs started in one turn (the worker hands over a batch)
 * are calls written in the same turn, so the host link sends them in one frame batch (one
 * postMessage or pipe write), and replies that settle together come back together. Each run keeps
 * its own hard timer and abort; the host a hard timeout ends takes the batch's other runs with it,
 * and they fail as for a crash (CalleeExited): retried by the queue's rules.
 */
import {
  behaviourModule,
  CalleeExited,
  terminateHost,
  type ActorRuntime,
  type Ref,
} from '../../../actors/index.js';
import { InvalidBusOption } from '../../errors.js';
import type { TaskExecutor } from '../api.js';
import type { TaskEnvelope } from '../envelope.js';
import { PermanentTaskFailure, TaskHandlerFailed, TaskHardTimeout, TaskPayloadInvalid, TaskResultInvalid, UnknownTaskHandler } from '../errors.js';
import { hostBootGate } from './boot-gate.js';
import { TASK_HOST_LIMIT_BYTES, type DescribeReply, type HostAbort, type HostRequest, type RunReply } from './host-protocol.js';

const HOST_MODULE = new URL(`./task-host.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);

/** How long a host may take to import the handlers module. */
const MODULE_LOAD_TIMEOUT_MS = 30_000;

/** What the executor tells its worker about its hosts' boots (each start, recycles included). */
export interface HostBootHooks {
  /** A boot began (`+1`, waiting for the gate counts) or settled (`-1`). */
  booting(delta: 1 | -1): void;
  /** A boot settled: the host is up with its module loaded, or it failed with `error`. */
  booted(ok: boolean, error?: unknown): void;
}

interface Session {
  readonly ref: Ref;
  readonly names: ReadonlySet<string>;
}

export class PlacedExecutor implements TaskExecutor {
  readonly #system: ActorRuntime;
  readonly #moduleUrl: string;
  #session: Promise<Session> | undefined;
  #nextRun = 0;
  #running = 0;
  #closed = false;
  /** Aborted by close: a boot still waiting for the gate leaves it. */
  readonly #closing = new AbortController();

  constructor(
    system: ActorRuntime,
    readonly placement: 'thread' | 'process',
    module: string | URL,
    /** Runs at once (the pool's `prefetch`). */
    readonly prefetch = 1,
    /** Where the host sends its runs' progress (HostProgress): the worker, which has no other way to hear it. */
    private readonly progressTo?: Ref,
    private readonly hooks?: HostBootHooks,
  ) {
    this.#system = system;
    this.#moduleUrl = moduleHref(module);
    // Started now: the worker's first task does not wait for a host.
    this.#start();
  }

  /** Resolves once a host is up and its module loaded (rejects with InvalidBusOption when the module is unusable). */
  async ready(): Promise<readonly string[]> {
    return [...(await this.#current()).names];
  }

  /** Progress comes from the host to `progressTo`, not to a callback: a function cannot cross to it. */
  async run(task: TaskEnvelope, signal: AbortSignal): Promise<string | undefined> {
    if (this.#closed) throw new InvalidBusOption('executor', 'is closed');
    if (this.#running >= this.prefetch) throw new InvalidBusOption('executor', `runs at most ${this.prefetch} task(s) at a time`);
    this.#running++;
    try {
      return await this.#run(task, signal);
    } finally {
      this.#running--;
    }
  }

  async #run(task: TaskEnvelope, signal: AbortSignal): Promise<string | undefined> {
    const session = await this.#current();
    if (!session.names.has(task.name)) throw new UnknownTaskHandler(task.name);
    const id = ++this.#nextRun;
    const { payload, ...rest } = task;
    const work = { task: rest, payloadJson: JSON.stringify(payload) };
    const request: HostRequest = this.progressTo === undefined ? { run: id, work } : { run: id, work, progressTo: this.progressTo };
    const abort = (): void => {
      const message: HostAbort = { abort: id, reason: describeAbort(signal.reason) };
      try {
        this.#system.send(session.ref, message);
      } catch {
        // The host is gone: the run fails by itself.
      }
    };
    let hard: NodeJS.Timeout | undefined;
    let timedOut = false;
    const deadline = new Promise<never>((_, reject) => {
      hard = setTimeout(() => {
        timedOut = true;
        reject(new TaskHardTimeout(task.id, task.timeout_hard_ms));
      }, task.timeout_hard_ms);
    });
    try {
      const call = this.#system.call<RunReply>(session.ref, request, Infinity);
      call.catch(() => undefined);
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
      let reply: RunReply;
      try {
        reply = await Promise.race([call, deadline]);
      } catch (error) {
        if (timedOut) await this.#recycle(session, 'hard-timeout');
        else if (error instanceof CalleeExited) this.#forget(session);
        throw error;
      }
      if (reply.ok) return reply.result;
      if ('thrown' in reply) throw new TaskHandlerFailed(task.name, reply.thrown);
      throw rebuild(reply.error, task);
    } finally {
      clearTimeout(hard);
      signal.removeEventListener('abort', abort);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort(new InvalidBusOption('executor', 'is closed'));
    const session = this.#session;
    this.#session = undefined;
    const current = await session?.catch(() => undefined);
    // Terminated rather than asked: a handler still running would never read a stop.
    if (current !== undefined) await terminateHost(this.#system, current.ref, 'closed');
  }

  #current(): Promise<Session> {
    return this.#session ?? this.#start();
  }

  #start(): Promise<Session> {
    this.hooks?.booting(1);
    // Gated (one boot per core at a time, see boot-gate.ts); a closed executor boots nothing more.
    const session = hostBootGate.run(async () => {
      if (this.#closed) throw new InvalidBusOption('executor', 'is closed');
      return startSession(this.#system, this.placement, this.#moduleUrl);
    }, this.#closing.signal);
    this.#session = session;
    session.then(
      () => {
        this.hooks?.booting(-1);
        this.hooks?.booted(true);
      },
      (error: unknown) => {
        this.hooks?.booting(-1);
        if (!this.#closed) this.hooks?.booted(false, error);
      },
    );
    session.then(
      (started) => {
        // Ended by anything but a recycle (a crash, out of memory): the next run starts a fresh host.
        void this.#system.exited(started.ref).then(() => {
          if (this.#session === session) this.#session = undefined;
        });
        if (this.#closed) void terminateHost(this.#system, started.ref, 'closed');
      },
      (error: unknown) => {
        // An unusable module stays the answer (every run rejects with it); anything else is retried by the next run.
        if (!(error instanceof InvalidBusOption) && this.#session === session) this.#session = undefined;
      },
    );
    return session;
  }

  #forget(session: Session): void {
    void this.#session?.then((current) => {
      if (current === session) this.#session = undefined;
    });
  }

  /** The host is terminated (and waited for), then a fresh one started, once however many of its runs timed out. */
  async #recycle(session: Session, why: string): Promise<void> {
    const current = this.#session;
    const mine = current !== undefined && (await current.catch(() => undefined)) === session && this.#session === current;
    if (mine) this.#session = undefined;
    await terminateHost(this.#system, session.ref, why);
    if (mine && !this.#closed && this.#session === undefined) this.#start().catch(() => undefined);
  }
}

async function startSession(system: ActorRuntime, placement: 'thread' | 'process', moduleUrl: string): Promise<Session> {
  const ref = await system.spawnPlaced(behaviourModule(HOST_MODULE, 'taskHost', moduleUrl), {
    placement,
    payloadLimitBytes: TASK_HOST_LIMIT_BYTES,
  });
  let described: DescribeReply;
  try {
    // Bounded: a module whose top level never settles must not hang the worker.
    described = await system.call<DescribeReply>(ref, { describe: true } satisfies HostRequest, MODULE_LOAD_TIMEOUT_MS);
  } catch (error) {
    await terminateHost(system, ref, 'unusable');
    throw error;
  }
  if ('invalid' in described) {
    await terminateHost(system, ref, 'unusable');
    throw new InvalidBusOption('executor.module', described.invalid);
  }
  return { ref, names: new Set(described.names) };
}

function moduleHref(module: string | URL): string {
  if (module instanceof URL) return module.href;
  if (typeof module !== 'string' || module.length === 0) throw new InvalidBusOption('executor.module', 'must be a URL, an absolute path or a package specifier');
  try {
    return behaviourModule(module).moduleUrl;
  } catch (error) {
    // A relative path: it would resolve differently in the host.
    throw new InvalidBusOption('executor.module', (error as Error).message);
  }
}

function describeAbort(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}

/** Errors whose class the worker tells apart by `instanceof` are rebuilt as it; the rest keep name, code, message. */
function rebuild(error: Error, task: TaskEnvelope): Error {
  const code = (error as Error & { code?: unknown }).code;
  let typed: Error | undefined;
  if (code === PermanentTaskFailure.code) typed = new PermanentTaskFailure(error.message, { cause: error.cause });
  else if (code === UnknownTaskHandler.code) typed = new UnknownTaskHandler(task.name);
  else if (code === TaskPayloadInvalid.code) typed = new TaskPayloadInvalid(task.name, String((error as Error & { problem?: unknown }).problem ?? error.message), { cause: error.cause });
  else if (code === TaskResultInvalid.code) typed = new TaskResultInvalid(task.name, String((error as Error & { problem?: unknown }).problem ?? error.message));
  if (typed === undefined) return error;
  if (error.stack !== undefined) typed.stack = error.stack;
  return typed;
}

/**
 * The actor a `thread` or `process` executor places in a host of its own: it imports the handlers
 * module there and runs one task at a time, replying when the handler settles. It never awaits a
 * handler in its own mailbox loop, so an abort (cancel, shutdown) reaches the handler while it
 * runs. What it cannot stop (an endless CPU loop) the executor ends by terminating the host.
 *
 * Lean on purpose (test/bus/tasks/host-boot.test.ts holds it): every import here is paid by every
 * host at boot, ten times over for a pool of ten.
 */
// Straight from the kernel's own modules, not the actors index: a host loads this at boot, and
// only what running a handler needs (the host's system has loaded these already).
import type { ActorBehaviour, ActorContext } from '../../../actors/behaviour.js';
import { CallRequest } from '../../../actors/messages.js';
import type { Ref } from '../../../actors/ref.js';
import type { TaskHandlers } from '../api.js';
import type { TaskEnvelope } from '../envelope.js';
import { TaskHandlerFailed } from '../errors.js';
import type { DescribeReply, HostAbort, HostProgress, HostRequest, RunReply } from './host-protocol.js';
import { findHandler, runHandler, type ProgressSink } from './run-handler.js';

type Loaded = { readonly handlers: TaskHandlers } | { readonly invalid: string };

async function load(moduleUrl: string): Promise<Loaded> {
  let module: Record<string, unknown>;
  try {
    module = (await import(moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    return { invalid: `${moduleUrl} could not be imported: ${error instanceof Error ? error.message : String(error)}` };
  }
  const handlers = module.handlers;
  if (typeof handlers !== 'object' || handlers === null) return { invalid: `${moduleUrl} exports no 'handlers' object` };
  const notFunctions = Object.entries(handlers).filter(([, value]) => typeof value !== 'function');
  if (notFunctions.length > 0) return { invalid: `handlers.${notFunctions[0]![0]} of ${moduleUrl} is not a function` };
  return { handlers: handlers as TaskHandlers };
}

/** The factory named by the executor: `behaviourModule(url, 'taskHost', moduleUrl)`. */
export function taskHost(moduleUrl: string): ActorBehaviour {
  let loaded: Promise<Loaded> | undefined;
  const runs = new Map<number, AbortController>();

  async function run(controller: AbortController, handlers: TaskHandlers, task: TaskEnvelope, progress: ProgressSink | undefined): Promise<RunReply> {
    try {
      const result = await runHandler(findHandler(handlers, task.name), task, controller.signal, progress);
      return result === undefined ? { ok: true } : { ok: true, result };
    } catch (error) {
      // The text of a non-Error travels as itself; the executor rebuilds TaskHandlerFailed.
      if (error instanceof TaskHandlerFailed) return { ok: false, thrown: error.thrown };
      return { ok: false, error: error as Error };
    }
  }

  return {
    name: 'task-host',
    handle(ctx, message) {
      if (!(message instanceof CallRequest)) {
        const abort = message as Partial<HostAbort> | null;
        if (typeof abort?.abort === 'number') runs.get(abort.abort)?.abort(new Error(String(abort.reason)));
        return;
      }
      const call = message as CallRequest<HostRequest, DescribeReply | RunReply>;
      const request = call.request;
      loaded ??= load(moduleUrl);
      // Registered now, before the module has loaded: an abort sent right after the call finds it.
      const controller = 'run' in request ? new AbortController() : undefined;
      if (controller !== undefined) runs.set((request as { run: number }).run, controller);
      // Not awaited here: the mailbox stays open for aborts while the handler runs.
      void loaded.then(async (module) => {
        if ('describe' in request) {
          call.reply('invalid' in module ? { invalid: module.invalid } : { names: Object.keys(module.handlers) });
          return;
        }
        try {
          if ('invalid' in module) {
            call.reply({ ok: false, error: new Error(module.invalid) });
            return;
          }
          const { task, payloadJson } = request.work;
          const envelope: TaskEnvelope = Object.freeze({ ...task, payload: JSON.parse(payloadJson) as TaskEnvelope['payload'] });
          const progressTo = request.progressTo;
          const progress = progressTo === undefined ? undefined : progressSender(ctx, progressTo, envelope.id);
          try {
            replySafely(call, await run(controller!, module.handlers, envelope, progress?.push));
          } finally {
            progress?.flush();
          }
        } finally {
          runs.delete(request.run);
        }
      });
    },
  };
}

/**
 * A run's progress, sent to the worker at most every PROGRESS_INTERVAL_MS (the latest value wins),
 * and once more when the run ends, so a handler that reports in a tight loop sends a few frames, not
 * one per call.
 */
function progressSender(ctx: ActorContext, to: Ref, id: string): { push: ProgressSink; flush: () => void } {
  let pending: string | undefined;
  let sentAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === undefined) return;
    const json = pending;
    pending = undefined;
    sentAt = performance.now();
    try {
      ctx.send(to, { kind: 'task-host-progress', id, json } satisfies HostProgress);
    } catch {
      // The worker is gone: the run's reply will not reach anyone either.
    }
  };
  const push = (json: string): void => {
    pending = json;
    const wait = sentAt + PROGRESS_INTERVAL_MS - performance.now();
    if (wait <= 0) flush();
    else timer ??= setTimeout(flush, wait);
  };
  return { push, flush };
}

const PROGRESS_INTERVAL_MS = 100;

/** An error that cannot cross (an unencodable cause, a huge message) is replaced by a plain one that says so. */
function replySafely(call: CallRequest<HostRequest, DescribeReply | RunReply>, reply: RunReply): void {
  try {
    call.reply(reply);
  } catch (failure) {
    const error = 'error' in reply ? reply.error : undefined;
    const replacement = new Error(`${error?.name ?? 'Error'}: ${String(error?.message).slice(0, 1_000)} (not sent whole: ${(failure as Error).message})`);
    call.reply({ ok: false, error: replacement });
  }
}

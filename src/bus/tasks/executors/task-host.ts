/**
 * The actor a `thread` or `process` executor places in a host of its own: it imports the handlers
 * module there and runs one task at a time, replying when the handler settles. It never awaits a
 * handler in its own mailbox loop, so an abort (cancel, shutdown) reaches the handler while it
 * runs. What it cannot stop (an endless CPU loop) the executor ends by terminating the host.
 */
import { CallRequest, type ActorBehaviour } from '../../../actors/index.js';
import type { TaskHandlers } from '../api.js';
import type { TaskEnvelope } from '../envelope.js';
import { TaskHandlerFailed } from '../errors.js';
import type { DescribeReply, HostAbort, HostRequest, RunReply } from './host-protocol.js';
import { findHandler, runHandler } from './run-handler.js';

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

  async function run(controller: AbortController, handlers: TaskHandlers, task: TaskEnvelope): Promise<RunReply> {
    try {
      await runHandler(findHandler(handlers, task.name), task, controller.signal);
      return { ok: true };
    } catch (error) {
      // The text of a non-Error travels as itself; the executor rebuilds TaskHandlerFailed.
      if (error instanceof TaskHandlerFailed) return { ok: false, thrown: error.thrown };
      return { ok: false, error: error as Error };
    }
  }

  return {
    name: 'task-host',
    handle(_ctx, message) {
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
          replySafely(call, await run(controller!, module.handlers, envelope));
        } finally {
          runs.delete(request.run);
        }
      });
    },
  };
}

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

/**
 * Behaviours for examples/placement.ts. A thread or process host imports this module itself, so
 * the logic never crosses the boundary: only messages do.
 */
import { isMainThread, threadId } from 'node:worker_threads';
import { CallRequest, type ActorBehaviour } from 'molo/actors';
import { GenServer } from 'molo/behaviours';

/** Where this code runs, for the printout. */
function where(): string {
  return isMainThread ? `process ${process.pid}` : `thread ${threadId} of process ${process.pid}`;
}

/** A CPU-bound GenServer worth moving off the main loop. */
export class Squarer extends GenServer<{ readonly square: number } | 'where', number | string> {
  override handleCall(request: { readonly square: number } | 'where'): number | string {
    if (request === 'where') return where();
    return request.square * request.square;
  }
}

/** Exported as a function: each actor gets its own server instance. */
export const squarer = () => GenServer.behaviour(() => new Squarer());

/** A plain actor that keeps a tally; `greeting` comes from the spawn arguments. */
export function tally(greeting: string): ActorBehaviour {
  let total = 0;
  return {
    name: 'tally',
    handle(_ctx, message) {
      if (message instanceof CallRequest) {
        const request = message.request as 'total' | 'where';
        message.reply(request === 'where' ? where() : `${greeting}: ${total}`);
      } else if (typeof message === 'number') {
        total += message;
      }
    },
  };
}

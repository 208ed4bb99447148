/** What the placed cases run in a host: a counter for sends and a GenServer echo for calls. */
import { CallRequest, type ActorBehaviour } from '../../src/actors/index.js';
import { GenServer } from '../../src/behaviours/index.js';

/** Counts plain messages; a `count` call answers the count (every earlier message has been handled by then). */
export function counter(): ActorBehaviour {
  let count = 0;
  return {
    name: 'bench-counter',
    handle(_ctx, message) {
      if (message instanceof CallRequest) message.reply(count);
      else count++;
    },
  };
}

export class Echo extends GenServer<number, number> {
  override handleCall(request: number): number {
    return request;
  }
}

export const echo = () => GenServer.behaviour(() => new Echo());

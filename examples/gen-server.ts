/**
 * A GenServer: a key-value store with calls, casts, a delayed reply and a continue step.
 * Run: npm run example examples/gen-server.ts
 */
import { ActorSystem } from 'molo/actors';
import { GenServer, NO_REPLY, type From } from 'molo/behaviours';

type Request = { op: 'get'; key: string } | { op: 'put'; key: string; value: string } | { op: 'waitFor'; key: string };
type Reply = string | undefined;

class Store extends GenServer<Request, Reply, { op: 'clear' }, unknown, 'warm'> {
  readonly data = new Map<string, string>();
  readonly waiting = new Map<string, From<Reply>[]>();

  override init(): void {
    // The continue step runs before any message already queued.
    this.continueWith('warm');
  }

  override handleContinue(): void {
    this.data.set('greeting', 'hello');
  }

  override handleCall(request: Request, from: From<Reply>): Reply | typeof NO_REPLY {
    switch (request.op) {
      case 'get':
        return this.data.get(request.key);
      case 'put': {
        this.data.set(request.key, request.value);
        for (const waiter of this.waiting.get(request.key) ?? []) GenServer.reply(waiter, request.value);
        this.waiting.delete(request.key);
        return request.value;
      }
      case 'waitFor': {
        const value = this.data.get(request.key);
        if (value !== undefined) return value;
        // Reply later, from the handler of another message.
        this.waiting.set(request.key, [...(this.waiting.get(request.key) ?? []), from]);
        return NO_REPLY;
      }
    }
  }

  override handleCast(): void {
    this.data.clear();
  }

  override terminate(reason: unknown): void {
    console.log('store terminating:', reason);
  }
}

const system = new ActorSystem({ node: 'example' });
const store = await GenServer.start(system, () => new Store(), { name: 'store' });
console.log('greeting:', await GenServer.call(system, store, { op: 'get', key: 'greeting' }));
const later = GenServer.call(system, store, { op: 'waitFor', key: 'answer' });
await GenServer.call(system, 'store', { op: 'put', key: 'answer', value: '42' });
console.log('waited for answer:', await later);
GenServer.cast(system, store, { op: 'clear' });
console.log('after clear:', await GenServer.call(system, store, { op: 'get', key: 'answer' }));
console.log('stopped with:', await GenServer.stop(system, store));

/**
 * The kernel on its own: spawn, send, call, links, monitors, trap-exit and selective receive.
 * Run: npm run example examples/actors.ts
 */
import { ActorSystem, CallRequest, DownMessage, ExitMessage, RECEIVE_TIMEOUT } from 'molo/actors';

const system = new ActorSystem({ node: 'example' });

// An actor is a function (or an object with init/handle/terminate) that handles one message at a time.
const counter = system.spawn<{ add: number }>((message) => {
  if (message instanceof CallRequest) message.reply(total);
  else if ('add' in (message as object)) total += (message as { add: number }).add;
});
let total = 0;
system.send(counter, { add: 2 });
system.send(counter, { add: 3 });
console.log('counter total:', await system.call(counter, 'total'));

// Monitors deliver DOWN messages; links propagate exits unless the receiver traps them.
const watcher = system.spawn(async (message, ctx) => {
  if (message === 'watch') {
    const doomed = ctx.spawn(() => {
      throw new Error('doomed on first message');
    });
    const monitor = ctx.monitor(doomed);
    ctx.send(doomed, 'go');
    const down = await ctx.receive((m): m is DownMessage => m instanceof DownMessage && m.monitor === monitor, 1_000);
    if (down !== RECEIVE_TIMEOUT) console.log('monitor saw:', (down.reason as Error).message);
  }
  if (message instanceof ExitMessage) console.log('trapped exit from a linked actor:', message.reason);
});
system.send(watcher, 'watch');
await system.settle();

const trapper = system.spawn((message) => {
  if (message instanceof ExitMessage) console.log('trapped exit:', message.reason);
}, { trapExit: true });
const partner = system.spawn(() => undefined, { link: trapper });
system.exit(partner, 'shutdown');
await system.settle();

system.shutdown();
console.log('actors left:', system.actorCount);

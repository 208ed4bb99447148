/**
 * Placement: one actor in a worker thread, one in a child process, both behind ordinary refs.
 * Calls, sends by name, a monitor and a link work across the boundary; a killed process host turns
 * into an exit signal with its documented reason.
 * Run: npm run example examples/placement.ts
 */
import {
  ActorSystem,
  behaviourModule,
  ExitMessage,
  formatReason,
  hostsExited,
  placementHosts,
  type DownMessage,
} from 'molo/actors';
import { GenServer } from 'molo/behaviours';
import type { Squarer } from './placement-workers.js';

const workers = new URL('./placement-workers.ts', import.meta.url);
const system = new ActorSystem({ node: 'example' });
console.log(`main process: ${process.pid}`);

// A GenServer in a worker thread; typed calls as usual.
const squarer = await GenServer.startPlaced(system, behaviourModule<Squarer>(workers, 'squarer'), { placement: 'thread' });
console.log(`squarer runs in: ${await GenServer.call(system, squarer, 'where')}`);
console.log(`12 squared: ${await GenServer.call(system, squarer, { square: 12 })}`);

// A plain actor in a child process, registered by name; its factory gets the spawn arguments.
const tally = await system.spawnPlaced(behaviourModule(workers, 'tally', 'tally'), { placement: 'process', name: 'tally' });
console.log(`tally runs in: ${await system.call('tally', 'where')}`);
for (const n of [1, 2, 3]) system.send('tally', n);
console.log(await system.call(tally, 'total'));

// A local actor that traps exits is linked to the process actor; a monitor watches the thread actor.
const seen = new Promise<ExitMessage>((resolve) => {
  system.spawn(
    {
      init: (ctx) => ctx.link(tally),
      handle: (_ctx, message) => {
        if (message instanceof ExitMessage) resolve(message);
      },
    },
    { trapExit: true, name: 'guardian' },
  );
});
const down = new Promise<DownMessage>((resolve) => {
  system.spawn({
    init: (ctx) => void ctx.monitor(squarer),
    handle: (ctx, message) => {
      resolve(message as DownMessage);
      ctx.stop();
    },
  });
});

await system.settle(); // both have run init: the link and the monitor are in place

// Kill the thread actor with an exit signal, and the child process from outside (SIGKILL).
system.exit(squarer, 'kill');
console.log(`monitor saw the thread actor exit: ${formatReason((await down).reason)}`);
const processHost = placementHosts(system).find((host) => host.placement === 'process');
process.kill(processHost!.pid!, 'SIGKILL');
const exit = await seen;
console.log(`guardian got EXIT from the process actor: ${formatReason(exit.reason)}`);

system.shutdown();
await hostsExited(system);
console.log(`actors left: ${system.actorCount}, hosts left: ${placementHosts(system).length}`);

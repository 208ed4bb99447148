/**
 * Supervisors: a one_for_one tree with a nested rest_for_one group and a dynamic pool.
 * Run: npm run example examples/supervisor.ts
 */
import { ActorSystem, type Ref } from 'molo/actors';
import { GenServer, Supervisor, worker } from 'molo/behaviours';

class Worker extends GenServer<'ping' | 'crash', string> {
  constructor(readonly label: string) {
    super();
  }

  override handleCall(request: 'ping' | 'crash'): string {
    if (request === 'crash') throw new Error(`${this.label} crashed on purpose`);
    return `${this.label}: pong`;
  }
}

const system = new ActorSystem({ node: 'example' });
const root = await Supervisor.start(
  system,
  {
    strategy: 'one_for_one',
    intensity: 3,
    periodMs: 5_000,
    children: [
      worker('db', () => new Worker('db')),
      Supervisor.child('pipeline', {
        strategy: 'rest_for_one',
        children: [worker('reader', () => new Worker('reader')), worker('writer', () => new Worker('writer'))],
      }),
      Supervisor.child('pool', {
        strategy: 'simple_one_for_one',
        children: [worker('job', (label: string) => new Worker(label), { restart: 'transient' })],
      }),
    ],
  },
  { name: 'root' },
);

const children = await Supervisor.whichChildren(system, root);
console.log('root children:', children.map((child) => `${child.id}(${child.type})`).join(', '));

const db = children[0]!.ref as Ref;
await GenServer.call(system, db, 'crash').catch((error: Error) => console.log('call failed:', error.message));
await system.settle();
const [dbAgain] = await Supervisor.whichChildren(system, root);
console.log('db restarted with a new ref:', dbAgain!.ref !== db);

const pool = children[2]!.ref as Ref;
const job = await Supervisor.startChild(system, pool, ['job-1']);
console.log(await GenServer.call(system, job!, 'ping'));
console.log('pool counts:', await Supervisor.countChildren(system, pool));

const status = await Supervisor.status(system, root);
console.log('restarts in window:', status.restartsInWindow, 'remaining:', status.remainingIntensity);
console.log('root stopped with:', await Supervisor.stop(system, root));
console.log('actors left:', system.actorCount);

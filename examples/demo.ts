/**
 * `npm start`: a small supervision tree doing visible work. A flaky worker crashes now and then
 * and its supervisor restarts it; the live tree is printed every few seconds. Ctrl-C (SIGINT) or
 * SIGTERM stops the tree in reverse start order and exits 0.
 *
 * MOLO_DEMO_MS=5000 stops it by itself after that long (used by the test that runs this file).
 */
import { ActorSystem, type Ref } from '../src/actors/index.js';
import { GenServer, Supervisor, worker, type SupervisorStatus } from '../src/behaviours/index.js';

class Ticker extends GenServer<'count', number, never, 'tick'> {
  ticks = 0;

  override init(): void {
    this.ctx.sendAfter(400, 'tick');
  }

  override handleInfo(message: unknown): void {
    if (message !== 'tick') return;
    this.ticks++;
    GenServer.cast<Squarer>(this.ctx.system, 'squarer', this.ticks);
    this.ctx.sendAfter(400, 'tick');
  }

  override handleCall(): number {
    return this.ticks;
  }
}

class Squarer extends GenServer<'last', number, number> {
  last = 0;

  override handleCast(n: number): void {
    this.last = n * n;
  }

  override handleCall(): number {
    return this.last;
  }
}

/** Jobs done by every incarnation of the flaky worker; every seventh job crashes it. */
let jobsDone = 0;

/** Crashes now and then: its supervisor restarts it each time. */
class Flaky extends GenServer<never, never, never, 'work'> {
  done = 0;

  override init(): void {
    this.ctx.sendAfter(300, 'work');
  }

  override handleInfo(): void {
    this.done++;
    if (++jobsDone % 7 === 0) throw new Error(`flaky worker gave up after ${this.done} jobs`);
    this.ctx.sendAfter(300, 'work');
  }

  override terminate(reason: unknown): void {
    if (reason instanceof Error) console.log(`  ! flaky crashed: ${reason.message} (its supervisor restarts it)`);
  }
}

async function printTree(system: ActorSystem, supervisor: Ref, label: string, indent = ''): Promise<void> {
  const status: SupervisorStatus = await Supervisor.status(system, supervisor);
  console.log(`${indent}${label} [${status.strategy}, ${status.remainingIntensity}/${status.intensity} restarts left]`);
  for (const child of status.children) {
    const info = child.ref ? system.info(child.ref) : undefined;
    const details = info ? `${child.ref} mailbox=${info.mailboxLength} handled=${info.messagesHandled}` : '-';
    console.log(`${indent}  ${child.id} ${child.state} restarts=${child.restartCount} ${details}`);
    if (child.type === 'supervisor' && child.ref) await printTree(system, child.ref, `${child.id}`, `${indent}    `);
  }
}

async function main(): Promise<void> {
  const system = new ActorSystem({ node: 'demo' });
  const root = await Supervisor.start(
    system,
    {
      strategy: 'one_for_one',
      intensity: 20,
      periodMs: 10_000,
      children: [
        worker('ticker', () => new Ticker()),
        Supervisor.child('workers', {
          strategy: 'one_for_one',
          intensity: 50,
          periodMs: 10_000,
          children: [worker('squarer', () => new Squarer(), { server: { name: 'squarer' } }), worker('flaky', () => new Flaky())],
        }),
      ],
    },
    { name: 'root' },
  );
  console.log('molo demo: a supervision tree is running. Ctrl-C stops it.');

  const printer = setInterval(() => {
    void (async () => {
      const ticks = await GenServer.call<Ticker>(system, (await Supervisor.whichChildren(system, root))[0]!.ref as Ref, 'count');
      const square = await GenServer.call<Squarer>(system, 'squarer', 'last');
      console.log(`\n-- tick ${ticks}, last square ${square} --`);
      await printTree(system, root, 'root');
    })().catch((error: unknown) => console.error('tree print failed:', error));
  }, 2_000);

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    clearInterval(printer);
    console.log(`\n${why}: stopping the tree in reverse start order...`);
    const reason = await Supervisor.stop(system, root);
    console.log(`stopped cleanly (root exited with ${String(reason)}, ${system.actorCount} actors left)`);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const runFor = Number(process.env.MOLO_DEMO_MS ?? 0);
  if (runFor > 0) setTimeout(() => void stop('time is up'), runFor);
}

await main();

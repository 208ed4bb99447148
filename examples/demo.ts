/**
 * `npm start`: a node running a small supervision tree doing visible work. A flaky worker crashes
 * now and then and its supervisor restarts it; an OS program is supervised beside the actors; the
 * live tree is printed every few seconds and served by the admin surface. Ctrl-C (SIGINT) or
 * SIGTERM stops the tree in reverse start order and exits 0.
 *
 * MOLO_DEMO_MS=5000 stops it by itself after that long, MOLO_ADMIN_PORT picks the admin port
 * (default 9710; 0 = any free port).
 */
import { Admin, formatTree, startNode } from 'molo/admin';
import { GenServer, ProgramSupervisor, Supervisor, worker, type ProgramLogger, type ProgramSpec } from 'molo/behaviours';

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

/** A small OS program the node supervises like supervisord would: it prints a heartbeat. */
const heartbeat: ProgramSpec = {
  name: 'heartbeat',
  command: process.execPath,
  args: ['-e', "let n = 0; setInterval(() => console.log('beat ' + ++n), 1000)"],
  restart: 'always',
  health: { type: 'command', command: process.execPath, args: ['-e', 'process.exit(0)'], intervalMs: 1_500 },
};

/** Program output goes to the terminal, one line each, prefixed with the program's name. */
const printLine = (fields: object, message?: string): void =>
  console.log(`  [${String((fields as { program?: string }).program ?? 'program')}] ${message ?? ''}`);
const programLog: ProgramLogger = { info: printLine, warn: printLine, error: printLine };

async function main(): Promise<void> {
  const port = Number(process.env.MOLO_ADMIN_PORT ?? 9710);
  const node = await startNode({
    node: 'demo',
    admin: { port },
    log: () => undefined,
    root: {
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
        ProgramSupervisor.child('programs', { programs: [heartbeat], logger: programLog }),
      ],
    },
  });
  const { system } = node;
  console.log(`molo demo: a supervision tree is running. Admin: ${node.adminUrl}/tree (or: npm run molo -- tree --url ${node.adminUrl}). Ctrl-C stops it.`);

  // A print that races the shutdown finds the admin gone: that is the stop working, not a failure.
  let stopping = false;
  const stopPrinting = (): void => {
    stopping = true;
    clearInterval(printer);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stopPrinting);
  const printer = setInterval(() => {
    void (async () => {
      const square = await GenServer.call<Squarer>(system, 'squarer', 'last');
      console.log(`\n-- last square ${square} --`);
      process.stdout.write(formatTree(await Admin.tree(system)));
    })().catch((error: unknown) => {
      if (!stopping) console.error('tree print failed:', error);
    });
  }, 2_000);

  node.stopped.then((result) => {
    stopPrinting();
    console.log(`stopped ${result.clean ? 'cleanly' : 'at the deadline'} in ${Math.round(result.durationMs)} ms (${system.actorCount} actors left)`);
  });
  const runFor = Number(process.env.MOLO_DEMO_MS ?? 0);
  if (runFor > 0) {
    setTimeout(() => {
      stopPrinting();
      console.log('\ntime is up: stopping the tree in reverse start order...');
      void node.stop().then((result) => process.exit(result.exitCode));
    }, runFor);
  }
}

await main();

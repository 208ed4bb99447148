/**
 * Supervised OS programs: two small Node.js programs under a ProgramSupervisor, a TCP health
 * check, a SIGKILL survived, the status snapshot, and a clean stop.
 * Run: npm run example examples/programs.ts
 */
import { createServer, type AddressInfo } from 'node:net';
import { ActorSystem, type Ref } from 'molo/actors';
import { liveProgramProcessCount, ProgramSupervisor, type ProgramLogger, type ProgramStatus } from 'molo/behaviours';

/** Program output and lifecycle events, one readable line each (any pino logger works too). */
function consoleLogger(bindings: Record<string, unknown> = {}): ProgramLogger {
  const print = (fields: object, message?: string): void => {
    const { program, stream } = { ...bindings, ...fields } as { program?: string; stream?: string };
    console.log(`  [${program ?? 'programs'}${stream === undefined ? '' : ` ${stream}`}] ${message ?? ''}`);
  };
  return { info: print, warn: print, error: print, child: (more) => consoleLogger({ ...bindings, ...more }) };
}

/** A free TCP port for the web program (and its health check). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const TICKER = 'let n = 0; console.log("ticker up"); setInterval(() => console.log("tick " + ++n), 250);';
const WEB = [
  'const server = require("node:net").createServer((socket) => socket.end("hello\\n"));',
  'server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening on " + process.env.PORT));',
  'process.on("SIGTERM", () => server.close(() => process.exit(0)));',
].join('');

async function waitFor(system: ActorSystem, sup: Ref, check: (programs: readonly ProgramStatus[]) => boolean): Promise<readonly ProgramStatus[]> {
  for (;;) {
    const { programs } = await ProgramSupervisor.status(system, sup);
    if (check(programs)) return programs;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function printStatus(programs: readonly ProgramStatus[]): void {
  for (const p of programs) {
    const exit = p.lastExit === undefined ? '-' : `${p.lastExit.signal ?? `code ${p.lastExit.code}`} (${p.lastExit.cause})`;
    console.log(`  ${p.name.padEnd(7)} ${p.state.padEnd(8)} pid=${p.pid ?? '-'} health=${p.health} restarts=${p.restartsInWindow}/${p.maxRestarts} total=${p.totalRestarts} last exit=${exit}`);
  }
}

const system = new ActorSystem({ node: 'example' });
const port = await freePort();
const sup = await ProgramSupervisor.start(
  system,
  {
    logger: consoleLogger(),
    programs: [
      { name: 'ticker', command: process.execPath, args: ['-e', TICKER], restart: 'always', backoff: { initialMs: 100, maxMs: 2_000 } },
      {
        name: 'web',
        command: process.execPath,
        args: ['-e', WEB],
        env: { PORT: String(port) },
        health: { type: 'tcp', port, intervalMs: 200, failures: 3 },
        stopTimeoutMs: 2_000,
      },
    ],
  },
  { name: 'programs' },
);
// Ctrl-C stops the programs before the process goes (a signal to Node.js runs no exit hooks).
const onSigint = (): void => void ProgramSupervisor.stop(system, sup);
process.once('SIGINT', onSigint);

let programs = await waitFor(system, sup, (all) => all.every((p) => p.state === 'running') && all[1]!.health === 'healthy');
console.log('status:');
printStatus(programs);

const oldPid = programs[0]!.pid!;
console.log(`kill -9 ticker (pid ${oldPid})`);
process.kill(oldPid, 'SIGKILL');
programs = await waitFor(system, sup, (all) => all[0]!.state === 'running' && all[0]!.pid !== oldPid);
console.log(`ticker restarted: pid ${oldPid} -> ${programs[0]!.pid}`);
console.log('status:');
printStatus(programs);

const reason = await ProgramSupervisor.stop(system, sup);
process.removeListener('SIGINT', onSigint);
console.log(`stopped cleanly (supervisor exited with ${String(reason)}, ${system.actorCount} actors and ${liveProgramProcessCount()} program processes left)`);

/**
 * Telemetry: one pino logger and a Prometheus registry wired into an actor system. A supervised
 * child crashes and restarts; the crash and supervisor reports are JSON lines with fixed fields,
 * and the restart shows up in the metrics text a /metrics endpoint would serve.
 * Run: npm run example examples/telemetry.ts
 */
import { ActorSystem } from 'molo/actors';
import { GenServer, Supervisor, worker } from 'molo/behaviours';
import { createTelemetry } from 'molo/telemetry';

class Greeter extends GenServer<string, string> {
  override handleCall(request: string): string {
    this.ctx.log.info({ request }, 'greeting'); // bound with actor, name and behaviour
    if (request === 'crash') throw new Error('greeter crashed on purpose');
    return `hello, ${request}`;
  }
}

// Log lines go to any stream with `write` (default stdout); here we keep them to show their fields.
const lines: Record<string, unknown>[] = [];
const telemetry = createTelemetry({
  logger: { level: 'info', destination: { write: (line: string) => lines.push(JSON.parse(line)) } },
  metrics: true, // a registry of its own; `{ processMetrics: true }` adds Node's process metrics
});
const system = new ActorSystem({ node: 'example', ...telemetry.systemOptions }); // { observer, logger }

const root = await Supervisor.start(
  system,
  { strategy: 'one_for_one', intensity: 3, periodMs: 5_000, children: [worker('greeter', () => new Greeter(), { server: { name: 'greeter' } })] },
  { name: 'root' },
);
console.log(await GenServer.call(system, 'greeter', 'world'));
await GenServer.call(system, 'greeter', 'crash').catch((error: Error) => console.log(`call failed: ${error.message}`));
await system.settle();
console.log(await GenServer.call(system, 'greeter', 'again'));

for (const line of lines) {
  if (line.msg === 'greeting') console.log(`log: greeting ${line.request} from ${line.behaviour}`);
  else if (typeof line.event === 'string' && line.event !== 'actor.exited') {
    console.log(`report: ${line.event} level ${line.level}${line.childId === undefined ? '' : ` child ${line.childId}`}`);
  }
}

// What GET /metrics serves (pass `telemetry.metricsText` to startNode's admin surface as its source).
const text = await telemetry.metricsText();
const wanted = /^molo_(supervisor_restarts_total\{|actor_exits_total\{reason="error"\}|root_supervisor_up )/;
for (const line of text.split('\n')) if (wanted.test(line)) console.log(`metric: ${line}`);

await Supervisor.stop(system, root);
telemetry.flush();
system.shutdown();

import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CalleeExited, shutdownWith, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { createTelemetry } from '../../src/telemetry/index.js';
import { eventually, testSystem } from '../support/systems.js';
import { deferred } from '../actors/helpers.js';

class Fragile extends GenServer<'crash' | 'ping', string> {
  override handleCall(request: 'crash' | 'ping'): string {
    if (request === 'crash') throw new Error('boom');
    return 'pong';
  }
}

/** The value of one series in Prometheus text, e.g. `molo_actor_exits_total{reason="error"}`. */
function series(text: string, name: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `)) return Number(line.slice(name.length + 1));
  }
  return undefined;
}

async function childRef(system: ReturnType<typeof testSystem>, supervisor: Ref, id: string): Promise<Ref> {
  const entry = (await Supervisor.whichChildren(system, supervisor)).find((child) => child.id === id);
  if (entry === undefined || typeof entry.ref !== 'object') throw new Error(`child ${id} is not running`);
  return entry.ref;
}

describe('metrics', () => {
  it('counts spawns, exits by reason class and supervisor restarts', async () => {
    const telemetry = createTelemetry({ logger: false, metrics: true });
    const system = testSystem({ ...telemetry.systemOptions });
    const quiet = (): Ref => system.spawn(function quiet() {});
    system.exit(quiet(), 'kill');
    system.exit(quiet(), 'shutdown');
    system.exit(quiet(), shutdownWith('drained'));
    const stopsItself = system.spawn(function stopsItself(_message, ctx) {
      ctx.stop();
    });
    system.send(stopsItself, 'go');
    const crashes = system.spawn(function crashes() {
      throw new Error('bad message');
    });
    system.send(crashes, 'go');
    await system.exited(crashes);
    await system.exited(stopsItself);

    const supervisor = await Supervisor.start(system, { children: [worker('fragile', () => new Fragile())] }, { name: 'top' });
    await expect(GenServer.call(system, await childRef(system, supervisor, 'fragile'), 'crash')).rejects.toBeInstanceOf(CalleeExited);
    await eventually(() => system.actorCount === 2, 5_000, 'the restart');
    await childRef(system, supervisor, 'fragile');

    const text = await telemetry.metricsText();
    // 5 plain actors, the supervisor, the child and its replacement.
    expect(series(text, 'molo_actors_spawned_total')).toBe(8);
    expect(series(text, 'molo_actor_exits_total{reason="killed"}')).toBe(1);
    expect(series(text, 'molo_actor_exits_total{reason="shutdown"}')).toBe(2);
    expect(series(text, 'molo_actor_exits_total{reason="normal"}')).toBe(1);
    expect(series(text, 'molo_actor_exits_total{reason="error"}')).toBe(2);
    expect(series(text, 'molo_actor_exits_total{reason="noproc"}')).toBe(0);
    expect(series(text, 'molo_supervisor_restarts_total{supervisor="top",child="fragile"}')).toBe(1);
    expect(series(text, 'molo_supervisor_events_total{event="child_terminated"}')).toBe(1);
    expect(series(text, 'molo_supervisor_events_total{event="child_restarted"}')).toBe(1);
    expect(series(text, 'molo_actors_alive{behaviour="Supervisor"}')).toBe(1);
    expect(series(text, 'molo_actors_alive{behaviour="Fragile"}')).toBe(1);
    expect(text).not.toContain('behaviour="quiet"');
    expect(text).toContain('# TYPE molo_supervisor_restarts_total counter');
    expect(text).toContain('# TYPE molo_mailbox_depth_max gauge');

    await Supervisor.stop(system, supervisor);
    const after = await telemetry.metricsText();
    expect(series(after, 'molo_actor_exits_total{reason="shutdown"}')).toBe(4);
    expect(after).not.toContain('molo_actors_alive{');
  });

  it('samples mailbox depth and messages handled at scrape time', async () => {
    const telemetry = createTelemetry({ logger: false, metrics: true });
    const system = testSystem({ ...telemetry.systemOptions });
    const gate = deferred();
    const blocked = system.spawn(async function blocked() {
      await gate.promise;
    });
    const idle = system.spawn(function idle() {});
    for (let i = 0; i < 5; i++) system.send(blocked, i);
    for (let i = 0; i < 3; i++) system.send(idle, i);
    await system.settle();

    const during = await telemetry.metricsText();
    // The blocked actor took one message and holds four; the idle one handled all three.
    expect(series(during, 'molo_mailbox_messages{behaviour="blocked"}')).toBe(4);
    expect(series(during, 'molo_mailbox_depth_max{behaviour="blocked"}')).toBe(4);
    expect(series(during, 'molo_mailbox_messages{behaviour="idle"}')).toBe(0);
    expect(series(during, 'molo_messages_handled_total')).toBe(4);
    expect(series(during, 'molo_actors_alive{behaviour="blocked"}')).toBe(1);

    gate.resolve();
    await system.settle();
    system.exit(blocked, 'kill');
    system.exit(idle, 'kill');
    // Exited actors' counts stay in the counter: it never goes down.
    const after = await telemetry.metricsText();
    expect(series(after, 'molo_messages_handled_total')).toBe(8);
    expect(series(after, 'molo_mailbox_messages{behaviour="blocked"}')).toBeUndefined();
  });

  it('keeps its own registry: nothing lands in prom-client’s global one, and two telemetries do not clash', async () => {
    const one = createTelemetry({ logger: false, metrics: true });
    const two = createTelemetry({ logger: false, metrics: { prefix: 'app_molo_' } });
    const system = testSystem({ ...one.systemOptions });
    system.exit(system.spawn(() => {}), 'kill');
    const source = one.metricsText; // handed on unbound, as the admin surface takes it
    expect(series(await source(), 'molo_actors_spawned_total')).toBe(1);
    expect(series(await two.metricsText(), 'app_molo_actors_spawned_total')).toBe(0);
    expect(await globalRegistry.metrics()).not.toContain('molo_');
    expect(one.metrics!.contentType).toContain('text/plain');
    expect(await createTelemetry({ logger: false }).metricsText()).toBe('');
  });
});

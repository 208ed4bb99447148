import { describe, expect, it, vi } from 'vitest';
import { type ActorContext } from '../../src/actors/index.js';
import { GenServer } from '../../src/behaviours/index.js';
import { createLogger, silentLogger } from '../../src/telemetry/index.js';
import { eventually, testSystem } from '../support/systems.js';
import { logCapture } from './helpers.js';

describe('ctx.log', () => {
  it('is a child of the system logger bound with the actor ref, name and behaviour', async () => {
    const capture = logCapture();
    const logger = createLogger({ destination: capture.stream, level: 'debug' });
    const system = testSystem({ logger });
    const ref = system.spawn(
      {
        name: 'Greeter',
        handle(ctx, message) {
          ctx.log.info({ greeting: message }, 'greeted');
          ctx.log.debug('done');
        },
      },
      { name: 'greeter' },
    );
    system.send(ref, 'hello');
    await eventually(() => capture.records().length === 2, 5_000, 'two lines');
    const [greeted, done] = capture.records();
    expect(greeted).toMatchObject({ level: 30, actor: ref.toString(), name: 'greeter', behaviour: 'Greeter', greeting: 'hello', msg: 'greeted' });
    expect(done).toMatchObject({ level: 20, actor: ref.toString(), msg: 'done' });
    system.exit(ref, 'kill');
  });

  it('is made on first use only, and once', async () => {
    const logger = createLogger({ destination: logCapture().stream });
    const child = vi.spyOn(logger, 'child');
    const system = testSystem({ logger });
    const contexts: ActorContext[] = [];
    const silent = system.spawn((_message, ctx) => void contexts.push(ctx));
    const chatty = system.spawn((_message, ctx) => {
      ctx.log.info('one');
      ctx.log.info('two');
    });
    system.send(silent, 'go');
    system.send(chatty, 'go');
    system.send(chatty, 'again');
    await system.settle();
    expect(child).toHaveBeenCalledTimes(1);
    expect(child.mock.calls[0]![0]).toMatchObject({ actor: chatty.toString() });
    system.exit(silent, 'kill');
    system.exit(chatty, 'kill');
  });

  it('names a GenServer by its class and is silent without a system logger', async () => {
    const capture = logCapture();
    class Counter extends GenServer<'log', boolean> {
      override handleCall(): boolean {
        this.ctx.log.warn({ count: 1 }, 'counted');
        return this.ctx.log === silentLogger;
      }
    }
    const logged = testSystem({ logger: createLogger({ destination: capture.stream }) });
    const server = await GenServer.start(logged, () => new Counter());
    expect(await GenServer.call(logged, server, 'log')).toBe(false);
    await eventually(() => capture.records().length === 1, 5_000, 'the line');
    expect(capture.records()[0]).toMatchObject({ level: 40, behaviour: 'Counter', count: 1, actor: server.toString() });
    await GenServer.stop(logged, server);

    const unlogged = testSystem();
    const quiet = await GenServer.start(unlogged, () => new Counter());
    expect(await GenServer.call(unlogged, quiet, 'log')).toBe(true);
    await GenServer.stop(unlogged, quiet);
  });
});

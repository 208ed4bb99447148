/**
 * GenServer held to OTP's gen_server_SUITE: each test names the suite case whose outcome it mirrors.
 */
import { describe, expect, it } from 'vitest';
import {
  ActorErrorCode,
  CalleeExited,
  CallingSelf,
  DownMessage,
  SimulatedClock,
  type ActorContext,
  type ExitReason,
  type Ref,
} from '../../src/actors/index.js';
import {
  BehaviourErrorCode,
  GenServer,
  StartFailed,
  StopTimeout,
  TIMEOUT,
  UndefinedCallback,
  type GenServerTimeout,
} from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';

describe('OTP gen_server_SUITE parity', () => {
  it('gen_server_SUITE: calling_self — a call from a server to itself fails at once, not at the timeout', async () => {
    const system = testSystem({ callTimeoutMs: 60_000 });
    const seen: unknown[] = [];
    class Server extends GenServer<'self-by-ctx' | 'self-by-system' | 'self-by-name' | 'ping', unknown> {
      override async handleCall(request: 'self-by-ctx' | 'self-by-system' | 'self-by-name' | 'ping'): Promise<unknown> {
        if (request === 'ping') return 'pong';
        try {
          if (request === 'self-by-ctx') await this.ctx.call(this.self, 'ping');
          else if (request === 'self-by-name') await this.ctx.call('me', 'ping');
          else await GenServer.call(this.ctx.system, this.self as Ref, 'ping');
        } catch (error) {
          seen.push(error);
        }
        return 'survived';
      }
    }
    const ref = await GenServer.start(system, () => new Server(), { name: 'me' });
    const started = Date.now();
    expect(await GenServer.call(system, ref, 'self-by-ctx')).toBe('survived');
    expect(await GenServer.call(system, ref, 'self-by-name')).toBe('survived');
    expect(await GenServer.call(system, ref, 'self-by-system')).toBe('survived');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(seen).toHaveLength(3);
    for (const error of seen) {
      expect(error).toBeInstanceOf(CallingSelf);
      expect((error as CallingSelf).code).toBe(ActorErrorCode.CallingSelf);
    }
    await GenServer.stop(system, ref);
  });

  it('gen_server_SUITE: undef_handle_cast — a cast to a server without handleCast crashes it with undef, never drops it', async () => {
    const system = testSystem();
    class NoCast extends GenServer<'ping', string, 'hello'> {
      override handleCall(): string {
        return 'pong';
      }
    }
    const ref = await GenServer.start(system, () => new NoCast());
    const exited = system.exited(ref);
    GenServer.cast<NoCast>(system, ref, 'hello');
    const reason = await exited;
    expect(reason).toBeInstanceOf(UndefinedCallback);
    expect((reason as UndefinedCallback).code).toBe(BehaviourErrorCode.UndefinedCallback);
    expect((reason as UndefinedCallback).callback).toBe('handleCast');
  });

  it('gen_server_SUITE: undef_handle_call — the caller sees the server exit with undef', async () => {
    const system = testSystem();
    class NoCall extends GenServer {}
    const ref = await GenServer.start(system, () => new NoCall());
    const error = await GenServer.call(system, ref as Ref, 'anything').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalleeExited);
    expect((error as CalleeExited).reason).toBeInstanceOf(UndefinedCallback);
  });

  it('gen_server_SUITE: call — {reply, R, S, Timeout}: timeout message only when no other message comes in time', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    class Within extends GenServer<{ within: number } | 'next', boolean | 'ok', never, GenServerTimeout> {
      timedOut = false;
      override handleCall(request: { within: number } | 'next'): boolean | 'ok' {
        if (request === 'next') {
          const answer = !this.timedOut;
          this.timedOut = false;
          return answer;
        }
        this.timeoutAfter(request.within);
        return 'ok';
      }
      override handleInfo(message: unknown): void {
        if (message === TIMEOUT) this.timedOut = true;
      }
    }
    const ref = await GenServer.start(system, () => new Within());
    expect(await GenServer.call(system, ref, { within: 1000 })).toBe('ok');
    clock.advance(500);
    await system.settle();
    // The next call arrived in time: it cancelled the timeout.
    expect(await GenServer.call(system, ref, 'next')).toBe(true);
    expect(await GenServer.call(system, ref, { within: 1000 })).toBe('ok');
    clock.advance(1500);
    await system.settle();
    expect(await GenServer.call(system, ref, 'next')).toBe(false);
    await GenServer.stop(system, ref);
  });

  it('gen_server_SUITE: spec_init (init timeout) — {ok, State, Timeout} from init delivers the timeout too', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const seen: unknown[] = [];
    class Idle extends GenServer<never, unknown, never, GenServerTimeout> {
      override init(): void {
        this.timeoutAfter(100);
      }
      override handleInfo(message: GenServerTimeout): void {
        seen.push(message);
      }
    }
    const ref = await GenServer.start(system, () => new Idle());
    clock.advance(99);
    await system.settle();
    expect(seen).toEqual([]);
    clock.advance(1);
    await system.settle();
    expect(seen).toEqual([TIMEOUT]);
    await GenServer.stop(system, ref);
  });

  it('gen_server_SUITE: hibernate — a hibernating server keeps answering; hibernate drops a pending timeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const seen: unknown[] = [];
    class Sleeper extends GenServer<'hibernate' | 'ping', string, never, GenServerTimeout> {
      override handleCall(request: 'hibernate' | 'ping'): string {
        if (request === 'hibernate') {
          this.timeoutAfter(10);
          this.hibernate();
          return 'hibernating';
        }
        return 'pong';
      }
      override handleInfo(message: GenServerTimeout): void {
        seen.push(message);
      }
    }
    const ref = await GenServer.start(system, () => new Sleeper());
    expect(await GenServer.call(system, ref, 'hibernate')).toBe('hibernating');
    clock.advance(100);
    await system.settle();
    expect(seen).toEqual([]);
    expect(await GenServer.call(system, ref, 'ping')).toBe('pong');
    await GenServer.stop(system, ref);
  });

  it('gen_server_SUITE: start — {timeout, T} start option: {error, timeout} and the server is gone', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    let release!: () => void;
    class Sleepy extends GenServer {
      override init(): Promise<void> {
        return new Promise((resolve) => (release = resolve));
      }
    }
    const parent = system.spawn(() => {}, { trapExit: true });
    const starting = GenServer.start(system, () => new Sleepy(), { name: 'sleepy', timeoutMs: 100, link: parent });
    await system.settle();
    clock.advance(100);
    const error = await starting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailed);
    expect((error as StartFailed).reason).toBe('timeout');
    expect(system.whereis('sleepy')).toBeUndefined();
    // The starter was unlinked first: it got no EXIT and is still alive.
    expect(system.info(parent)?.mailboxLength).toBe(0);
    release();
    await system.settle();
    system.exit(parent, 'kill');
  });

  it('gen_server_SUITE: stop2 / stop3 — stop with another reason and a timeout; an invalid timeout leaves it running', async () => {
    const system = testSystem();
    class Plain extends GenServer {}
    const ref = await GenServer.start(system, () => new Plain());
    await expect(GenServer.stop(system, ref, 'other_reason', -1)).rejects.toMatchObject({ code: ActorErrorCode.InvalidOption });
    expect(system.isAlive(ref)).toBe(true);
    expect(await GenServer.stop(system, ref, 'other_reason', Infinity)).toBe('other_reason');
    expect(system.isAlive(ref)).toBe(false);
    expect(await GenServer.stop(system, ref)).toBe('noproc');
  });

  it('gen_server_SUITE: stop with timeout — a server slower than the timeout gives exit(timeout) and keeps running', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    let release!: () => void;
    class Slow extends GenServer {
      override terminate(): Promise<void> {
        return new Promise((resolve) => (release = resolve));
      }
    }
    const ref = await GenServer.start(system, () => new Slow());
    const stopping = GenServer.stop(system, ref, 'normal', 50);
    await system.settle();
    clock.advance(50);
    const error = await stopping.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StopTimeout);
    expect((error as StopTimeout).code).toBe(BehaviourErrorCode.StopTimeout);
    release();
    expect(await system.exited(ref)).toBe('normal');
  });

  it('gen_server_SUITE: start_monitor — start and monitor atomically; on failure the DOWN is flushed', async () => {
    const system = testSystem();
    class Ok extends GenServer {}
    class Bad extends GenServer {
      override init(): void {
        throw new Error('no');
      }
    }
    const outcome: unknown[] = [];
    const watcher = system.spawn<unknown>({
      async init(ctx: ActorContext<unknown>) {
        const started = await GenServer.startMonitor(ctx, () => new Ok());
        outcome.push(started.monitor);
        const failed = await GenServer.startMonitor(ctx, () => new Bad()).catch((e: unknown) => e);
        outcome.push(failed);
        outcome.push(ctx.system.info(ctx.self)?.mailboxLength);
        ctx.exit(started.ref, 'shutdown');
        const down = await ctx.receive((m): m is DownMessage => m instanceof DownMessage, 1000);
        outcome.push(down instanceof DownMessage && down.monitor === started.monitor ? down.reason : 'no-down');
      },
      handle() {},
    });
    await system.settle();
    for (let i = 0; i < 20 && outcome.length < 4; i++) await new Promise((r) => setTimeout(r, 5));
    expect(typeof outcome[0]).toBe('number');
    expect(outcome[1]).toBeInstanceOf(StartFailed);
    expect(outcome[2]).toBe(0);
    expect(outcome[3]).toBe('shutdown');
    system.exit(watcher, 'kill');
  });

  it('gen_server_SUITE: crash — exit reasons are any value, not only Errors ({stop, Reason, State})', async () => {
    const system = testSystem();
    const custom = { bad_state: 42 };
    class Stopper extends GenServer<ExitReason, 'ok'> {
      override handleCall(reason: ExitReason): 'ok' {
        this.stop(reason);
        return 'ok';
      }
    }
    const ref: Ref = await GenServer.start(system, () => new Stopper());
    const exited = system.exited(ref);
    expect(await GenServer.call(system, ref, custom)).toBe('ok');
    expect(await exited).toBe(custom);
    const second = await GenServer.start(system, () => new Stopper());
    const exited2 = system.exited(second);
    await GenServer.call(system, second, 17);
    expect(await exited2).toBe(17);
  });
});

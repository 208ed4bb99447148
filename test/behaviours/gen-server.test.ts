import { describe, expect, it } from 'vitest';
import {
  CalleeExited,
  CallTimeout,
  DownMessage,
  ExitMessage,
  SimulatedClock,
  type ExitReason,
  type Ref,
} from '../../src/actors/index.js';
import { GenServer, NO_REPLY, StartFailed, type From } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';

/** A promise with its resolve outside, to hold an async callback at a known point. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type CounterCall = { add: number } | 'get' | 'crash';

class Counter extends GenServer<CounterCall, number, 'inc', unknown> {
  count = 0;
  override handleCall(request: CounterCall): number {
    if (request === 'crash') throw new Error('asked to crash');
    if (request !== 'get') this.count += request.add;
    return this.count;
  }
  override handleCast(): void {
    this.count++;
  }
}

describe('GenServer: start and init', () => {
  it('OTP gen_server_SUITE: start — start resolves once init has run; init runs before any message', async () => {
    const system = testSystem();
    const log: string[] = [];
    class Server extends GenServer<'ping', string> {
      override async init() {
        log.push('init:begin');
        await Promise.resolve();
        log.push('init:end');
      }
      override handleCall(): string {
        log.push('call');
        return 'pong';
      }
    }
    const pending = GenServer.start(system, () => new Server(), { name: 'srv' });
    // A call sent by name before init finished waits for it.
    const reply = GenServer.call<Server>(system, 'srv', 'ping');
    const ref = await pending;
    expect(await reply).toBe('pong');
    expect(log).toEqual(['init:begin', 'init:end', 'call']);
    expect(system.whereis('srv')).toBe(ref);
    expect(await GenServer.stop(system, ref)).toBe('normal');
  });

  it('the factory makes a fresh instance for each start and ctx is set before init', async () => {
    const system = testSystem();
    let made = 0;
    class Server extends GenServer<'self', Ref> {
      selfAtInit: Ref | undefined;
      override init() {
        this.selfAtInit = this.self;
      }
      override handleCall(): Ref {
        return this.selfAtInit!;
      }
    }
    const a = await GenServer.start(system, () => (made++, new Server()));
    const b = await GenServer.start(system, () => (made++, new Server()));
    expect(made).toBe(2);
    expect(await GenServer.call<Server>(system, a, 'self')).toBe(a);
    expect(await GenServer.call<Server>(system, b, 'self')).toBe(b);
    await GenServer.stop(system, a);
    await GenServer.stop(system, b);
  });

  it('OTP gen_server_SUITE: start — an init that throws rejects start with StartFailed and leaves nothing behind', async () => {
    const system = testSystem();
    const boom = new Error('init failed');
    let terminated = false;
    class Server extends GenServer {
      override init() {
        throw boom;
      }
      override terminate() {
        terminated = true;
      }
    }
    const error = await GenServer.start(system, () => new Server(), { name: 'bad' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailed);
    expect((error as StartFailed).code).toBe('BEHAVIOUR_START_FAILED');
    expect((error as StartFailed).reason).toBe(boom);
    expect((error as StartFailed).cause).toBe(boom);
    expect(system.whereis('bad')).toBeUndefined();
    expect(system.actorCount).toBe(0);
    // OTP: terminate/2 is not called when init fails.
    expect(terminated).toBe(false);
  });

  it('an async init that rejects rejects start with StartFailed', async () => {
    const system = testSystem();
    class Server extends GenServer {
      override async init() {
        await Promise.resolve();
        throw new Error('later');
      }
    }
    const error = await GenServer.start(system, () => new Server()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailed);
    expect(((error as StartFailed).reason as Error).message).toBe('later');
  });

  it('OTP gen_server_SUITE: start — init asking to stop ({stop, Reason}) rejects with that reason', async () => {
    const system = testSystem();
    let terminated = false;
    class Server extends GenServer {
      override init() {
        this.stop('no_config' as unknown as ExitReason);
      }
      override terminate() {
        terminated = true;
      }
    }
    const error = await GenServer.start(system, () => new Server()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailed);
    expect((error as StartFailed).reason).toBe('no_config');
    expect(terminated).toBe(false);
    expect(system.actorCount).toBe(0);
  });

  it('a linked starter sees no EXIT from a server whose init failed (start_link returns the error instead)', async () => {
    const system = testSystem();
    const seen: unknown[] = [];
    const parent = system.spawn((message) => void seen.push(message), { trapExit: true });
    class Server extends GenServer {
      override init() {
        throw new Error('nope');
      }
    }
    await expect(GenServer.start(system, () => new Server(), { link: parent })).rejects.toBeInstanceOf(StartFailed);
    await system.settle();
    expect(seen).toEqual([]);
    expect(system.isAlive(parent)).toBe(true);
    system.exit(parent, 'kill');
  });

  it('a name already taken makes start throw NameTaken', async () => {
    const system = testSystem();
    const first = await GenServer.start(system, () => new Counter(), { name: 'counter' });
    await expect(GenServer.start(system, () => new Counter(), { name: 'counter' })).rejects.toMatchObject({ code: 'ACTOR_NAME_TAKEN' });
    await GenServer.stop(system, first);
  });
});

describe('GenServer: calls', () => {
  it('OTP gen_server_SUITE: call — the return value of handleCall is the reply; state carries over', async () => {
    const system = testSystem();
    const ref = await GenServer.start(system, () => new Counter());
    expect(await GenServer.call(system, ref, { add: 2 })).toBe(2);
    expect(await GenServer.call(system, ref, { add: 3 })).toBe(5);
    expect(await GenServer.call(system, ref, 'get')).toBe(5);
    await GenServer.stop(system, ref);
  });

  it('an async handleCall replies when its promise settles, and the next message waits for it', async () => {
    const system = testSystem();
    const gate = deferred();
    const log: string[] = [];
    class Server extends GenServer<'slow' | 'fast', string> {
      override async handleCall(request: 'slow' | 'fast'): Promise<string> {
        log.push(`begin ${request}`);
        if (request === 'slow') await gate.promise;
        log.push(`end ${request}`);
        return request;
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const slow = GenServer.call<Server>(system, ref, 'slow');
    const fast = GenServer.call<Server>(system, ref, 'fast');
    await system.settle();
    expect(log).toEqual(['begin slow']);
    gate.resolve();
    expect(await slow).toBe('slow');
    expect(await fast).toBe('fast');
    expect(log).toEqual(['begin slow', 'end slow', 'begin fast', 'end fast']);
    await GenServer.stop(system, ref);
  });

  it('NO_REPLY + GenServer.reply: a reply sent later from another callback reaches the caller', async () => {
    const system = testSystem();
    class Barrier extends GenServer<'wait', string, { release: string }> {
      waiting: From<string>[] = [];
      override handleCall(_request: 'wait', from: From<string>) {
        this.waiting.push(from);
        return NO_REPLY;
      }
      override handleCast(message: { release: string }): void {
        for (const from of this.waiting) GenServer.reply(from, message.release);
        this.waiting = [];
      }
    }
    const ref = await GenServer.start(system, () => new Barrier());
    const a = GenServer.call<Barrier>(system, ref, 'wait');
    const b = GenServer.call<Barrier>(system, ref, 'wait');
    let settled = false;
    void a.then(() => (settled = true));
    await system.settle();
    expect(settled).toBe(false);
    GenServer.cast<Barrier>(system, ref, { release: 'go' });
    expect(await a).toBe('go');
    expect(await b).toBe('go');
    await GenServer.stop(system, ref);
  });

  it('NO_REPLY from an async handleCall, replied from handleInfo (a timer) on a SimulatedClock', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    class Delayed extends GenServer<number, string, never, { from: From<string> }> {
      override async handleCall(delay: number, from: From<string>) {
        await Promise.resolve();
        this.ctx.sendAfter(delay, { from });
        return NO_REPLY;
      }
      override handleInfo(message: { from: From<string> } | ExitMessage | DownMessage): void {
        if (!(message instanceof ExitMessage) && !(message instanceof DownMessage)) GenServer.reply<string>(message.from, 'late');
      }
    }
    const ref = await GenServer.start(system, () => new Delayed());
    const reply = GenServer.call<Delayed>(system, ref, 100);
    await system.settle();
    clock.advance(99);
    await system.settle();
    let settled = false;
    void reply.then(() => (settled = true));
    await system.settle();
    expect(settled).toBe(false);
    clock.advance(1);
    expect(await reply).toBe('late');
    await GenServer.stop(system, ref);
  });

  it('a caller gets CallTimeout when no reply comes in time; a late reply is dropped', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    class Sink extends GenServer<'wait', string, 'answer'> {
      from: From<string> | undefined;
      override handleCall(_r: 'wait', from: From<string>) {
        this.from = from;
        return NO_REPLY;
      }
      override handleCast(): void {
        expect(this.from!.open).toBe(false);
        GenServer.reply(this.from!, 'too late');
      }
    }
    const ref = await GenServer.start(system, () => new Sink());
    const reply = GenServer.call<Sink>(system, ref, 'wait', 50).catch((e: unknown) => e);
    await system.settle();
    clock.advance(50);
    const error = await reply;
    expect(error).toBeInstanceOf(CallTimeout);
    expect((error as CallTimeout).code).toBe('ACTOR_CALL_TIMEOUT');
    GenServer.cast<Sink>(system, ref, 'answer');
    await system.settle();
    expect(system.isAlive(ref)).toBe(true);
    await GenServer.stop(system, ref);
  });

  it('OTP gen_server_SUITE: crash — handleCall that throws exits the server; the caller gets CalleeExited with the error', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    class Server extends Counter {
      override terminate(reason: ExitReason) {
        reasons.push(reason);
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const exited = system.exited(ref);
    const error = await GenServer.call(system, ref, 'crash').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalleeExited);
    expect((error as CalleeExited).code).toBe('ACTOR_CALLEE_EXITED');
    expect(((error as CalleeExited).reason as Error).message).toBe('asked to crash');
    expect(((await exited) as Error).message).toBe('asked to crash');
    expect(reasons).toHaveLength(1);
    expect((reasons[0] as Error).message).toBe('asked to crash');
  });

  it('OTP gen_server_SUITE: undef_handle_call — a call to a server without handleCall crashes it', async () => {
    const system = testSystem();
    class NoCalls extends GenServer {}
    const ref = await GenServer.start(system, () => new NoCalls());
    const error = await system.call(ref, 'anything').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalleeExited);
    expect(system.isAlive(ref)).toBe(false);
  });

  it('a call to a dead server rejects with NoProc', async () => {
    const system = testSystem();
    const ref = await GenServer.start(system, () => new Counter());
    await GenServer.stop(system, ref);
    await expect(GenServer.call(system, ref, 'get')).rejects.toMatchObject({ code: 'ACTOR_NOPROC' });
  });

  it('servers can call each other', async () => {
    const system = testSystem();
    const counter = await GenServer.start(system, () => new Counter());
    class Proxy extends GenServer<number, number> {
      override async handleCall(add: number): Promise<number> {
        return await this.ctx.call<number>(counter, { add });
      }
    }
    const proxy = await GenServer.start(system, () => new Proxy());
    expect(await GenServer.call<Proxy>(system, proxy, 4)).toBe(4);
    expect(await GenServer.call<Proxy>(system, proxy, 1)).toBe(5);
    await GenServer.stop(system, proxy);
    await GenServer.stop(system, counter);
  });
});

describe('GenServer: casts and info', () => {
  it('OTP gen_server_SUITE: cast — casts are handled in order, after earlier calls', async () => {
    const system = testSystem();
    const ref = await GenServer.start(system, () => new Counter());
    GenServer.cast<Counter>(system, ref, 'inc');
    GenServer.cast<Counter>(system, ref, 'inc');
    expect(await GenServer.call(system, ref, 'get')).toBe(2);
    await GenServer.stop(system, ref);
    // A cast to a dead server is silent.
    expect(() => GenServer.cast<Counter>(system, ref, 'inc')).not.toThrow();
  });

  it('OTP gen_server_SUITE: info — plain messages, EXITs of linked actors (when trapping) and DOWNs go to handleInfo', async () => {
    const system = testSystem();
    const seen: unknown[] = [];
    class Watcher extends GenServer<{ watch: Ref } | { link: Ref }, void, never, unknown> {
      override handleCall(request: { watch: Ref } | { link: Ref }): void {
        if ('watch' in request) this.ctx.monitor(request.watch);
        else this.ctx.link(request.link);
      }
      override handleInfo(message: unknown): void {
        seen.push(message);
      }
    }
    const ref = await GenServer.start(system, () => new Watcher(), { trapExit: true });
    system.send(ref, { hello: 1 });
    const watched = system.spawn(() => {});
    const linked = system.spawn(() => {});
    await GenServer.call<Watcher>(system, ref, { watch: watched });
    await GenServer.call<Watcher>(system, ref, { link: linked });
    system.exit(watched, 'kill');
    system.exit(linked, 'shutdown');
    await system.settle();
    expect(seen[0]).toEqual({ hello: 1 });
    const down = seen.find((m) => m instanceof DownMessage) as DownMessage;
    expect(down.ref).toBe(watched);
    expect(down.reason).toBe('killed');
    const exit = seen.find((m) => m instanceof ExitMessage) as ExitMessage;
    expect(exit.from).toBe(linked);
    expect(exit.reason).toBe('shutdown');
    expect(system.isAlive(ref)).toBe(true);
    await GenServer.stop(system, ref);
  });

  it('OTP gen_server_SUITE: undef_handle_info — a message for a server without handleInfo is dropped', async () => {
    const system = testSystem();
    const ref = await GenServer.start(system, () => new Counter());
    system.send(ref, 'stray');
    expect(await GenServer.call(system, ref, 'get')).toBe(0);
    await GenServer.stop(system, ref);
  });
});

describe('GenServer: continue', () => {
  it('OTP gen_server_SUITE: continue — a continue step from init runs before messages already queued', async () => {
    const system = testSystem();
    const log: string[] = [];
    class Server extends GenServer<never, unknown, string, unknown, string> {
      override init() {
        log.push('init');
        this.continueWith('after-init');
      }
      override handleContinue(arg: string) {
        log.push(`continue ${arg}`);
      }
      override handleCast(message: string) {
        log.push(`cast ${message}`);
      }
    }
    const started = GenServer.start(system, () => new Server(), { name: 'cont' });
    // Queued before init has even run.
    GenServer.cast<Server>(system, 'cont', 'first');
    const ref = await started;
    await system.settle();
    expect(log).toEqual(['init', 'continue after-init', 'cast first']);
    await GenServer.stop(system, ref);
  });

  it('OTP gen_server_SUITE: continue — start resolves without waiting for init’s continue step; calls wait for it', async () => {
    const system = testSystem();
    const gate = deferred();
    const log: string[] = [];
    class Server extends GenServer<'get', string[], never, unknown, string> {
      override init() {
        this.continueWith('slow setup');
      }
      override async handleContinue(arg: string) {
        log.push(`begin ${arg}`);
        await gate.promise;
        log.push(`end ${arg}`);
      }
      override handleCall(): string[] {
        return [...log];
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    await system.settle();
    expect(log).toEqual(['begin slow setup']);
    const reply = GenServer.call<Server>(system, ref, 'get');
    await system.settle();
    gate.resolve();
    expect(await reply).toEqual(['begin slow setup', 'end slow setup']);
    await GenServer.stop(system, ref);
  });

  it('a continue step from init that fails crashes the started server (terminate runs; start already succeeded)', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    const gate = deferred();
    class Server extends GenServer<never, unknown, never, unknown, number> {
      override init() {
        this.continueWith(1);
      }
      override async handleContinue(): Promise<void> {
        await gate.promise;
        throw new Error('setup failed');
      }
      override terminate(reason: ExitReason) {
        reasons.push(reason);
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const exited = system.exited(ref);
    gate.resolve();
    expect(((await exited) as Error).message).toBe('setup failed');
    expect(reasons).toHaveLength(1);
  });

  it('a continue step from a handler runs before already-queued messages; steps chain, async ones too', async () => {
    const system = testSystem();
    const log: string[] = [];
    class Server extends GenServer<'get', string[], string, unknown, number> {
      override handleCast(message: string) {
        log.push(`cast ${message}`);
        if (message === 'a') this.continueWith(1);
      }
      override async handleContinue(step: number) {
        await Promise.resolve();
        log.push(`continue ${step}`);
        if (step < 3) this.continueWith(step + 1);
      }
      override handleCall(): string[] {
        return log;
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    GenServer.cast<Server>(system, ref, 'a');
    GenServer.cast<Server>(system, ref, 'b');
    expect(await GenServer.call<Server>(system, ref, 'get')).toEqual(['cast a', 'continue 1', 'continue 2', 'continue 3', 'cast b']);
    await GenServer.stop(system, ref);
  });

  it('a continue step requested by handleCall runs after the reply is sent, before the next message', async () => {
    const system = testSystem();
    const log: string[] = [];
    class Server extends GenServer<string, string, never, unknown, string> {
      override handleCall(request: string): string {
        log.push(`call ${request}`);
        if (request === 'one') this.continueWith('x');
        return request;
      }
      override handleContinue(arg: string) {
        log.push(`continue ${arg}`);
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const one = GenServer.call<Server>(system, ref, 'one');
    const two = GenServer.call<Server>(system, ref, 'two');
    expect(await Promise.all([one, two])).toEqual(['one', 'two']);
    expect(log).toEqual(['call one', 'continue x', 'call two']);
    await GenServer.stop(system, ref);
  });

  it('asking to continue without handleContinue crashes the server', async () => {
    const system = testSystem();
    class Server extends GenServer<never, unknown, 'go', unknown, number> {
      override handleCast() {
        this.continueWith(1);
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const exited = system.exited(ref);
    GenServer.cast<Server>(system, ref, 'go');
    expect(await exited).toBeInstanceOf(Error);
  });
});

describe('GenServer: stop and terminate', () => {
  it('OTP gen_server_SUITE: stop1/stop2 — GenServer.stop runs terminate with the reason and resolves with it', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    class Server extends GenServer {
      override terminate(reason: ExitReason) {
        reasons.push(reason);
      }
    }
    const a = await GenServer.start(system, () => new Server());
    expect(await GenServer.stop(system, a)).toBe('normal');
    const b = await GenServer.start(system, () => new Server(), { name: 'b' });
    expect(await GenServer.stop(system, 'b', 'shutdown')).toBe('shutdown');
    expect(reasons).toEqual(['normal', 'shutdown']);
    expect(system.whereis('b')).toBeUndefined();
  });

  it('OTP gen_server_SUITE: stop3 — stopping a server that is not alive resolves with noproc', async () => {
    const system = testSystem();
    const ref = await GenServer.start(system, () => new Counter());
    await GenServer.stop(system, ref);
    expect(await GenServer.stop(system, ref)).toBe('noproc');
    expect(await GenServer.stop(system, 'nobody')).toBe('noproc');
  });

  it('a handler calling this.stop(reason) exits with it after the callback; terminate runs; open calls fail', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    class Server extends GenServer<'stop' | 'hang', string> {
      override handleCall(request: 'stop' | 'hang', _from: From<string>) {
        if (request === 'hang') return NO_REPLY;
        this.stop({ shutdown: 'asked' });
        return 'stopping';
      }
      override terminate(reason: ExitReason) {
        reasons.push(reason);
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const exited = system.exited(ref);
    const hung = GenServer.call<Server>(system, ref, 'hang').catch((e: unknown) => e);
    expect(await GenServer.call<Server>(system, ref, 'stop')).toBe('stopping');
    expect(await exited).toEqual({ shutdown: 'asked' });
    expect(reasons).toEqual([{ shutdown: 'asked' }]);
    const error = await hung;
    expect(error).toBeInstanceOf(CalleeExited);
    expect((error as CalleeExited).reason).toEqual({ shutdown: 'asked' });
  });

  it('an async terminate is awaited before the server exits', async () => {
    const system = testSystem();
    const gate = deferred();
    class Server extends GenServer {
      override async terminate() {
        await gate.promise;
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    const stopped = GenServer.stop(system, ref, 'shutdown');
    await system.settle();
    expect(system.isAlive(ref)).toBe(true);
    gate.resolve();
    expect(await stopped).toBe('shutdown');
  });

  it('a server trapping exits stops with its parent’s reason, running terminate (OTP parent EXIT)', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    const parent = system.spawn(() => {});
    class Server extends GenServer {
      override terminate(reason: ExitReason) {
        reasons.push(reason);
      }
    }
    const ref = await GenServer.start(system, () => new Server(), { link: parent, trapExit: true });
    const exited = system.exited(ref);
    system.exit(parent, 'shutdown');
    expect(await exited).toBe('shutdown');
    expect(reasons).toEqual(['shutdown']);
  });

  it('a server not trapping exits dies with its linked parent without terminate; kill skips terminate too', async () => {
    const system = testSystem();
    let terminated = 0;
    class Server extends GenServer {
      override terminate() {
        terminated++;
      }
    }
    const parent = system.spawn(() => {});
    const ref = await GenServer.start(system, () => new Server(), { link: parent });
    const exited = system.exited(ref);
    system.exit(parent, 'shutdown');
    expect(await exited).toBe('shutdown');
    const other = await GenServer.start(system, () => new Server(), { trapExit: true });
    const killed = system.exited(other);
    system.exit(other, 'kill');
    expect(await killed).toBe('killed');
    expect(terminated).toBe(0);
  });

  it('OTP gen_server_SUITE: undef_in_terminate — a terminate that throws changes the exit reason to what it threw', async () => {
    const system = testSystem();
    const failure = new Error('terminate failed');
    class Server extends GenServer {
      override terminate(): void {
        throw failure;
      }
    }
    const ref = await GenServer.start(system, () => new Server());
    expect(await GenServer.stop(system, ref, 'shutdown')).toBe(failure);
  });
});

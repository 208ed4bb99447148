/**
 * Authentication against servers that cut corners, through a scripted fake server on a real
 * socket: one that lets us in without asking for the configured password (refused by
 * `requireAuth`, on by default when a password is set), and one that asks for SCRAM with the
 * largest iteration count (the derivation runs off the event loop, and is derived once per
 * password, salt and count).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AuthFailed, AuthMethodRefused } from '../../../src/data/errors.js';
import { clearScramCache, MAX_SCRAM_ITERATIONS } from '../../../src/data/pg/auth.js';
import { connectPostgres } from '../../../src/data/pg/index.js';
import { be, startFakePg, type FakePg } from '../../support/pg-fake.js';
import { testSystem } from '../../support/systems.js';
import { rejection } from './pg-support.js';

let fake: FakePg | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('requireAuth', () => {
  it('a server that skips authentication although a password is configured is refused', async () => {
    fake = await startFakePg({});
    const config = { host: '127.0.0.1', port: fake.port, user: 'u' };
    const refused = await rejection(connectPostgres(testSystem(), { ...config, password: 'pw' }));
    expect(refused).toBeInstanceOf(AuthMethodRefused);
    expect(refused.message).toContain('requireAuth');
    expect(refused.message).not.toContain('pw');
    // Told that the server may trust us, or with no password at all: accepted.
    const trusting = await connectPostgres(testSystem(), { ...config, password: 'pw', requireAuth: false });
    await trusting.close();
    const passwordless = await connectPostgres(testSystem(), config);
    await passwordless.close();
  });

  it('a server that says ReadyForQuery without AuthenticationOk is refused', async () => {
    fake = await startFakePg({ startup: (session) => session.write(be.backendKey(), be.ready()) });
    const error = await rejection(connectPostgres(testSystem(), { host: '127.0.0.1', port: fake.port, user: 'u' }));
    expect((error as { code?: string }).code).toBe('DB_PROTOCOL_ERROR');
  });
});

describe('SCRAM with a high iteration count', () => {
  it(`derives ${MAX_SCRAM_ITERATIONS} iterations without blocking the event loop, and only once per (password, salt, count)`, async () => {
    clearScramCache();
    const windows: { started: number; ended: number }[] = [];
    fake = await startFakePg({
      startup: (session) => session.write(be.authSasl()),
      message: (session, type, body) => {
        if (type !== 'p') return;
        const text = body.toString('latin1');
        const nonce = /r=([\x21-\x2b\x2d-\x7e]+)/.exec(text);
        if (text.startsWith('SCRAM-SHA-256\0') && nonce !== null) {
          windows.push({ started: performance.now(), ended: 0 });
          session.write(be.authSaslContinue(`r=${nonce[1]}server,s=${Buffer.from('molo-salt').toString('base64')},i=${MAX_SCRAM_ITERATIONS}`));
        } else {
          windows[windows.length - 1]!.ended = performance.now();
          session.write(be.error('28P01', 'password authentication failed for user "u"', 'FATAL'));
        }
      },
    });
    // A timer that should keep firing every 5 ms; its largest gap inside each derivation window is the stall.
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 5);
    try {
      for (let i = 0; i < 2; i++) {
        const error = await rejection(connectPostgres(testSystem(), { host: '127.0.0.1', port: fake.port, user: 'u', password: 'pencil', connectTimeoutMs: 60_000 }));
        expect(error).toBeInstanceOf(AuthFailed);
      }
    } finally {
      clearInterval(timer);
    }
    const stall = (w: { started: number; ended: number }): number => {
      const inside = [w.started, ...ticks.filter((t) => t > w.started && t < w.ended), w.ended];
      return Math.max(...inside.slice(1).map((t, i) => t - inside[i]!));
    };
    const [first, second] = windows as [{ started: number; ended: number }, { started: number; ended: number }];
    const firstMs = first.ended - first.started;
    const secondMs = second.ended - second.started;
    console.log(`SCRAM ${MAX_SCRAM_ITERATIONS} iterations: derivation window ${firstMs.toFixed(0)} ms, longest event-loop stall in it ${stall(first).toFixed(0)} ms; cached: ${secondMs.toFixed(0)} ms`);
    // The timer kept ticking through the derivation: no gap near the derivation's length.
    expect(stall(first)).toBeLessThan(Math.max(firstMs / 2, 1));
    // The second login reused the derivation.
    expect(secondMs).toBeLessThan(firstMs / 2);
  }, 60_000);
});

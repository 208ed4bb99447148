/**
 * SCRAM-SHA-256 and MD5 computations against published vectors and hostile server messages.
 * (The same code against a real server is in auth.test.ts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuthFailed, ProtocolError } from '../../../src/data/errors.js';
import { MAX_SCRAM_ITERATIONS, md5PasswordMessage, saslprepPassword, ScramClient } from '../../../src/data/pg/auth.js';

// RFC 7677 section 3.
const RFC_CLIENT_NONCE = 'rOprNGfwEbeRWgbNEkqO';
const RFC_SERVER_FIRST = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
const RFC_CLIENT_FINAL = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=';
const RFC_SERVER_FINAL = 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=';

function rfcClient(password = 'pencil'): ScramClient {
  const client = new ScramClient(password, RFC_CLIENT_NONCE, 'user');
  client.clientFirstMessage();
  return client;
}

describe('ScramClient', () => {
  it('reproduces the RFC 7677 SCRAM-SHA-256 exchange', async () => {
    const client = new ScramClient('pencil', RFC_CLIENT_NONCE, 'user');
    expect(client.mechanism).toBe('SCRAM-SHA-256');
    expect(client.clientFirstMessage()).toBe('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    expect(await client.clientFinalMessage(RFC_SERVER_FIRST)).toBe(RFC_CLIENT_FINAL);
    expect(() => client.verifyServerFinal(RFC_SERVER_FINAL)).not.toThrow();
  });

  it('sends an empty user name and a fresh 24-character nonce by default', () => {
    const a = new ScramClient('pencil').clientFirstMessage();
    const b = new ScramClient('pencil').clientFirstMessage();
    expect(a).toMatch(/^n,,n=,r=[A-Za-z0-9+/]{24}$/);
    expect(a).not.toBe(b);
  });

  it('escapes = and , in the user name', () => {
    expect(new ScramClient('x', 'abc', 'a=b,c').clientFirstMessage()).toBe('n,,n=a=3Db=2Cc,r=abc');
  });

  it('a different password gives a different proof, and the real server signature then fails', async () => {
    const client = rfcClient('pencil2');
    expect(await client.clientFinalMessage(RFC_SERVER_FIRST)).not.toBe(RFC_CLIENT_FINAL);
    expect(() => client.verifyServerFinal(RFC_SERVER_FINAL)).toThrow(AuthFailed);
  });

  it('rejects a server signature that is wrong, short or not base64', async () => {
    const wrong = Buffer.from(RFC_SERVER_FINAL.slice(2), 'base64');
    wrong[0]! ^= 1;
    const cases: [string, typeof AuthFailed | typeof ProtocolError][] = [
      [`v=${wrong.toString('base64')}`, AuthFailed],
      [`v=${wrong.subarray(0, 31).toString('base64')}`, AuthFailed],
      ['v=', AuthFailed],
      ['v=not*base64', ProtocolError],
      ['x=abcd', ProtocolError],
      [`${RFC_SERVER_FINAL},x=1`, ProtocolError],
      ['', ProtocolError],
    ];
    for (const [final, type] of cases) {
      const client = rfcClient();
      await client.clientFinalMessage(RFC_SERVER_FIRST);
      expect(() => client.verifyServerFinal(final), final).toThrow(type);
    }
  });

  it("reports the server's e= error as AuthFailed, repeating only a well-formed token", async () => {
    const client = rfcClient();
    await client.clientFinalMessage(RFC_SERVER_FIRST);
    expect(() => client.verifyServerFinal('e=invalid-proof')).toThrow(/authentication failed: .*'invalid-proof'/);
    const other = rfcClient();
    await other.clientFinalMessage(RFC_SERVER_FIRST);
    expect(() => other.verifyServerFinal('e=<script>')).toThrow(/ended the SCRAM exchange with an error$/);
  });

  it('rejects malformed server-first messages with ProtocolError', () => {
    const cases = [
      '',
      'garbage',
      'r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', // nonce not extended
      'r=XOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', // not our nonce
      'r=rOprNGfwEbeRWgbNEkqOabc,s=,i=4096',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=04096',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096.5',
      `r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=${MAX_SCRAM_ITERATIONS + 1}`,
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==',
      'r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,x=1',
      's=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOabc,i=4096',
      'm=ext,r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
      'r=rOprNGfwEbeRWgbNEkqOab c,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
      'r=rOprNGfwEbeRWgbNEkqOabé,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
      `r=rOprNGfwEbeRWgbNEkqO${'a'.repeat(5000)},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`,
    ];
    for (const serverFirst of cases) {
      const client = rfcClient();
      expect(() => client.clientFinalMessage(serverFirst), serverFirst.slice(0, 80)).toThrow(ProtocolError);
      // After a rejected server-first there is nothing to verify: still a typed error.
      expect(() => client.verifyServerFinal(RFC_SERVER_FINAL)).toThrow(ProtocolError);
    }
  });

  it('accepts the largest allowed iteration count', async () => {
    const client = rfcClient();
    const started = performance.now();
    expect(await client.clientFinalMessage(`r=${RFC_CLIENT_NONCE}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=${MAX_SCRAM_ITERATIONS}`)).toMatch(/,p=/);
    // Bounds how long a hostile server can block the event loop (measured ~0.3 s here).
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('enforces the call order', async () => {
    const client = new ScramClient('pencil', RFC_CLIENT_NONCE);
    expect(() => client.clientFinalMessage(RFC_SERVER_FIRST)).toThrow(ProtocolError);
    const twice = rfcClient();
    expect(() => twice.clientFirstMessage()).toThrow(ProtocolError);
    const early = rfcClient();
    expect(() => early.verifyServerFinal(RFC_SERVER_FINAL)).toThrow(ProtocolError);
    const done = rfcClient();
    await done.clientFinalMessage(RFC_SERVER_FIRST);
    done.verifyServerFinal(RFC_SERVER_FINAL);
    expect(() => done.verifyServerFinal(RFC_SERVER_FINAL)).toThrow(ProtocolError);
    expect(() => new ScramClient('pencil', 'bad,nonce')).toThrow(ProtocolError);
  });

  it('never throws an untyped error nor echoes the password, whatever the server sends (fuzz)', async () => {
    const password = 'S3cret-p4ss-Ⅸ';
    const attribute = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('r=', 's=', 'i=', 'v=', 'e=', 'm='),
      fc.constant(`r=${RFC_CLIENT_NONCE}`),
      fc.base64String({ maxLength: 44 }).map((s) => `s=${s}`),
      fc.integer({ min: -5, max: 2 * MAX_SCRAM_ITERATIONS }).map((n) => `i=${n}`),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
    );
    const message = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(attribute, { maxLength: 5 }).map((parts) => parts.join(',')),
      fc.tuple(fc.string({ maxLength: 20 }), fc.base64String({ maxLength: 30 }), fc.integer({ min: 1, max: 5000 })).map(
        ([suffix, salt, i]) => `r=${RFC_CLIENT_NONCE}${suffix},s=${salt},i=${i}`,
      ),
    );
    await fc.assert(
      fc.asyncProperty(message, message, async (serverFirst, serverFinal) => {
        const client = new ScramClient(password, RFC_CLIENT_NONCE);
        client.clientFirstMessage();
        for (const step of [() => client.clientFinalMessage(serverFirst), () => client.verifyServerFinal(serverFinal)]) {
          try {
            await step();
          } catch (error) {
            if (!(error instanceof ProtocolError || error instanceof AuthFailed)) throw error;
            const text = `${error.message}\n${error.stack ?? ''}\n${JSON.stringify(error)}`;
            if (text.includes(password) || text.includes(saslprepPassword(password))) throw new Error('password echoed');
          }
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});

describe('saslprepPassword (as Postgres applies it)', () => {
  it('leaves ASCII alone, even what SASLprep would reject', () => {
    expect(saslprepPassword('pencil')).toBe('pencil');
    expect(saslprepPassword('bell\u0007')).toBe('bell\u0007');
    expect(saslprepPassword('')).toBe('');
  });

  it('maps and normalizes (RFC 4013 examples)', () => {
    expect(saslprepPassword('I\u00ADX')).toBe('IX');
    expect(saslprepPassword('\u00AA')).toBe('a');
    expect(saslprepPassword('\u2168')).toBe('IX');
    expect(saslprepPassword('pass\u00A0word')).toBe('pass word');
    expect(saslprepPassword('e\u0301')).toBe('\u00E9');
  });

  it('falls back to the raw password when SASLprep fails', () => {
    expect(saslprepPassword('\u00E9\u2028')).toBe('\u00E9\u2028'); // prohibited (non-ASCII control)
    expect(saslprepPassword('\u05D0a')).toBe('\u05D0a'); // bidi rule
    expect(saslprepPassword('\u0221e\u0301')).toBe('\u0221e\u0301'); // unassigned in Unicode 3.2
    expect(saslprepPassword('\u00AD')).toBe('\u00AD'); // nothing left after mapping
  });
});

describe('md5PasswordMessage', () => {
  // Expected values computed independently (Python hashlib).
  it('matches known MD5 responses', () => {
    expect(md5PasswordMessage('postgres', 'postgres', Buffer.from([1, 2, 3, 4]))).toBe('md568be9ed08db75f318087ab337aaea044');
    expect(md5PasswordMessage('jörg', 'pässwörd', Buffer.from([0xff, 0, 0x80, 0x7f]))).toBe('md508eedd3082b304e2b4a7a041a4b21dcb');
  });

  it('rejects a salt that is not 4 bytes', () => {
    expect(() => md5PasswordMessage('u', 'p', Buffer.alloc(3))).toThrow(ProtocolError);
    expect(() => md5PasswordMessage('u', 'p', Buffer.alloc(5))).toThrow(ProtocolError);
  });
});

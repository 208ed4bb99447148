/**
 * Postgres password authentication, the client's side: SCRAM-SHA-256 (RFC 5802 / RFC 7677, no
 * channel binding) and the legacy MD5 response. Pure functions of the exchanged messages: the
 * connection actor moves the bytes and decides which methods it accepts.
 *
 * Every server message is untrusted: it is parsed strictly and any deviation throws a typed
 * `ProtocolError` (malformed) or `AuthFailed` (the server said no, or could not prove it knows the
 * password). No error message ever contains the password or anything derived from it.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { AuthFailed, ProtocolError } from '../errors.js';

/**
 * Most PBKDF2 iterations a server may ask for. The derivation runs on libuv's thread pool (about
 * 0.3 s of a core per million iterations), never on the event loop; the cap bounds the CPU a
 * hostile or misconfigured server can make each connection spend. Postgres uses 4096 by default.
 */
export const MAX_SCRAM_ITERATIONS = 1_000_000;
/**
 * Salted passwords kept, by (password, salt, iterations): a pool reconnecting to the same server
 * derives once, not once per connection. Postgres stores one salt per role, so a few entries serve
 * every role a process logs in as.
 */
export const SCRAM_CACHE_SIZE = 16;
/** Longest server SCRAM message accepted; Postgres sends about 100 characters. */
export const MAX_SCRAM_MESSAGE_LENGTH = 4096;
/** 18 random bytes, as libpq uses: 24 base64 characters. */
const CLIENT_NONCE_BYTES = 18;
const KEY_LENGTH = 32;
/** base64("n,,"): the GS2 header for "client does not support channel binding". */
const GS2_HEADER = 'n,,';
const CHANNEL_BINDING = Buffer.from(GS2_HEADER).toString('base64');

/** Printable ASCII except ',' (RFC 5802 `printable`), what a nonce may hold. */
const NONCE_RE = /^[\x21-\x2b\x2d-\x7e]+$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Decimal without sign or leading zero; the range is checked after. */
const ITERATIONS_RE = /^[1-9][0-9]{0,9}$/;
/** RFC 5802 server-error-value is a short token; anything else is not repeated in our message. */
const SERVER_ERROR_RE = /^[a-z0-9-]{1,64}$/;

type Saslprep = (input: string, options?: { allowUnassigned?: boolean }) => string;
let saslprepFn: Saslprep | undefined;
/** Loaded at the first SCRAM exchange, not at import: most programs never authenticate by password. */
function saslprep(): Saslprep {
  return (saslprepFn ??= (createRequire(import.meta.url)('@mongodb-js/saslprep') as { saslprep: Saslprep }).saslprep);
}

/**
 * The password as Postgres normalizes it: pure ASCII is used as is; otherwise SASLprep (RFC 4013,
 * unassigned code points prohibited); if SASLprep rejects it (prohibited character, bidi rule,
 * nothing left after mapping), the raw password is used, exactly as the server did when it stored it.
 *
 * Known difference: Postgres checks prohibited and bidi characters on the mapped but not yet
 * NFKC-normalized string, the package on the normalized one; they disagree only for characters
 * whose compatibility decomposition is itself prohibited, which no real password holds.
 */
export function saslprepPassword(password: string): string {
  if (/^[\x00-\x7f]*$/.test(password)) return password;
  try {
    const prepared = saslprep()(password);
    return prepared.length > 0 ? prepared : password;
  } catch {
    return password;
  }
}

/** RFC 5802 saslname: ',' and '=' escaped. Postgres ignores the name (it uses the startup user). */
function saslName(user: string): string {
  return saslprepPassword(user).replace(/=/g, '=3D').replace(/,/g, '=2C');
}

type ScramState = 'initial' | 'first-sent' | 'final-sent' | 'done';

/**
 * One SCRAM-SHA-256 exchange. Call in order: `clientFirstMessage()` (SASLInitialResponse),
 * `clientFinalMessage(serverFirst)` (after AuthenticationSASLContinue), `verifyServerFinal(serverFinal)`
 * (after AuthenticationSASLFinal). Any step out of order, or any malformed server message, throws.
 */
export class ScramClient {
  readonly mechanism = 'SCRAM-SHA-256' as const;
  private readonly clientNonce: string;
  private readonly clientFirstBare: string;
  private password: string | undefined;
  private expectedServerSignature: Buffer | undefined;
  private state: ScramState = 'initial';

  /**
   * @param nonce fixed client nonce, for test vectors only; random otherwise.
   * @param user name put in the client-first message; Postgres ignores it, so empty by default
   *   (as libpq does). Tests pass it to reproduce RFC 7677's vector.
   */
  constructor(password: string, nonce?: string, user = '') {
    if (nonce !== undefined && !NONCE_RE.test(nonce)) throw new ProtocolError('SCRAM client nonce must be printable ASCII without commas');
    this.clientNonce = nonce ?? randomBytes(CLIENT_NONCE_BYTES).toString('base64');
    this.clientFirstBare = `n=${saslName(user)},r=${this.clientNonce}`;
    this.password = password;
  }

  clientFirstMessage(): string {
    this.step('initial', 'first-sent', 'client-first');
    return GS2_HEADER + this.clientFirstBare;
  }

  /**
   * Checks the server-first message at once (throws ProtocolError if it is malformed or out of
   * order), then derives the proof off the event loop.
   */
  clientFinalMessage(serverFirst: string): Promise<string> {
    this.step('first-sent', 'final-sent', 'client-final');
    const { nonce, salt, iterations } = this.parseServerFirst(serverFirst);
    const password = this.password ?? '';
    // The password is needed only for this derivation; drop our reference to it.
    this.password = undefined;
    return saltedPasswordOf(saslprepPassword(password), salt, iterations).then((salted) => this.proof(serverFirst, nonce, salted));
  }

  private proof(serverFirst: string, nonce: string, salted: Buffer): string {
    const saltedPassword = Buffer.from(salted); // our copy: the cache keeps its own
    const clientFinalWithoutProof = `c=${CHANNEL_BINDING},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${clientFinalWithoutProof}`;
    const clientKey = hmac(saltedPassword, 'Client Key');
    const storedKey = createHash('sha256').update(clientKey).digest();
    const clientSignature = hmac(storedKey, authMessage);
    const proof = Buffer.alloc(KEY_LENGTH);
    for (let i = 0; i < KEY_LENGTH; i++) proof[i] = clientKey[i]! ^ clientSignature[i]!;
    this.expectedServerSignature = hmac(hmac(saltedPassword, 'Server Key'), authMessage);
    saltedPassword.fill(0);
    clientKey.fill(0);
    return `${clientFinalWithoutProof},p=${proof.toString('base64')}`;
  }

  /** Checks the server's proof that it knows the password too; throws `AuthFailed` if it does not. */
  verifyServerFinal(serverFinal: string): void {
    this.step('final-sent', 'done', 'server-final verification');
    checkMessage(serverFinal, 'server-final');
    const expected = this.expectedServerSignature;
    this.expectedServerSignature = undefined;
    // Unset when the server-first message was rejected: there is nothing to verify against.
    if (expected === undefined) throw new ProtocolError('SCRAM server-final verification out of order');
    if (serverFinal.startsWith('e=')) {
      const value = serverFinal.slice(2);
      throw new AuthFailed(SERVER_ERROR_RE.test(value) ? `server ended the SCRAM exchange with error '${value}'` : 'server ended the SCRAM exchange with an error');
    }
    if (!serverFinal.startsWith('v=')) throw new ProtocolError('SCRAM server-final message must be v=<signature> or e=<error>');
    const encoded = serverFinal.slice(2);
    if (!BASE64_RE.test(encoded)) throw new ProtocolError('SCRAM server signature is not base64');
    const signature = Buffer.from(encoded, 'base64');
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      throw new AuthFailed('the server could not prove it knows the password (SCRAM server signature mismatch)');
    }
  }

  private step(from: ScramState, to: ScramState, what: string): void {
    if (this.state !== from) {
      this.state = 'done';
      throw new ProtocolError(`SCRAM ${what} out of order`);
    }
    this.state = to;
  }

  private parseServerFirst(message: string): { nonce: string; salt: Buffer; iterations: number } {
    checkMessage(message, 'server-first');
    const parts = message.split(',');
    if (parts[0]?.startsWith('m=')) throw new ProtocolError('SCRAM server-first message demands an unsupported mandatory extension');
    if (parts.length !== 3 || !parts[0]!.startsWith('r=') || !parts[1]!.startsWith('s=') || !parts[2]!.startsWith('i=')) {
      throw new ProtocolError('SCRAM server-first message must be r=<nonce>,s=<salt>,i=<iterations>');
    }
    const nonce = parts[0]!.slice(2);
    if (!NONCE_RE.test(nonce)) throw new ProtocolError('SCRAM server nonce holds characters outside printable ASCII');
    if (!nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length) {
      throw new ProtocolError('SCRAM server nonce does not extend the client nonce');
    }
    const encodedSalt = parts[1]!.slice(2);
    if (encodedSalt.length === 0 || !BASE64_RE.test(encodedSalt)) throw new ProtocolError('SCRAM salt is not base64');
    const salt = Buffer.from(encodedSalt, 'base64');
    const digits = parts[2]!.slice(2);
    const iterations = ITERATIONS_RE.test(digits) ? Number(digits) : Number.NaN;
    if (!(iterations >= 1 && iterations <= MAX_SCRAM_ITERATIONS)) {
      throw new ProtocolError(`SCRAM iteration count must be an integer from 1 to ${MAX_SCRAM_ITERATIONS} (MAX_SCRAM_ITERATIONS)`);
    }
    return { nonce, salt, iterations };
  }
}

/** Bounded printable ASCII, or a ProtocolError. */
function checkMessage(message: unknown, what: string): asserts message is string {
  if (typeof message !== 'string') throw new ProtocolError(`SCRAM ${what} message is not text`);
  if (message.length > MAX_SCRAM_MESSAGE_LENGTH) throw new ProtocolError(`SCRAM ${what} message longer than ${MAX_SCRAM_MESSAGE_LENGTH} characters (MAX_SCRAM_MESSAGE_LENGTH)`);
  if (!/^[\x21-\x7e]+$/.test(message)) throw new ProtocolError(`SCRAM ${what} message is empty or holds characters outside printable ASCII`);
}

/** LRU of salted-password derivations (in flight or done), by a digest of their inputs. */
const saltedPasswords = new Map<string, Promise<Buffer>>();

/** PBKDF2-SHA-256 of the password on the thread pool, shared by concurrent and later logins with the same inputs. */
function saltedPasswordOf(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  const key = createHash('sha256').update('molo.scram\0').update(String(Buffer.byteLength(password))).update('\0').update(password).update(salt).update(`\0${iterations}`).digest('base64');
  const cached = saltedPasswords.get(key);
  if (cached !== undefined) {
    saltedPasswords.delete(key);
    saltedPasswords.set(key, cached);
    return cached;
  }
  const derived = new Promise<Buffer>((resolve, reject) => {
    pbkdf2(password, salt, iterations, KEY_LENGTH, 'sha256', (error, result) => (error === null ? resolve(result) : reject(new ProtocolError('SCRAM key derivation failed', { cause: error }))));
  });
  derived.catch(() => saltedPasswords.delete(key));
  saltedPasswords.set(key, derived);
  if (saltedPasswords.size > SCRAM_CACHE_SIZE) saltedPasswords.delete(saltedPasswords.keys().next().value!);
  return derived;
}

/** Forgets every cached salted password (tests; a password rotation needs nothing: new inputs, new key). */
export function clearScramCache(): void {
  saltedPasswords.clear();
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/**
 * The PasswordMessage body for AuthenticationMD5Password: 'md5' + hex(md5(hex(md5(password + user)) + salt)).
 * MD5 is broken as a password hash; the connection refuses it unless `allowMd5` is set.
 */
export function md5PasswordMessage(user: string, password: string, salt: Buffer): string {
  if (!Buffer.isBuffer(salt) || salt.length !== 4) throw new ProtocolError('MD5 authentication salt must be 4 bytes');
  const inner = createHash('md5').update(password, 'utf8').update(user, 'utf8').digest('hex');
  return 'md5' + createHash('md5').update(inner, 'latin1').update(salt).digest('hex');
}

/**
 * The startup conversation, from StartupMessage to the first ReadyForQuery: authentication
 * (SCRAM-SHA-256; MD5 and cleartext only when allowed; with `requireAuth`, on by default when a
 * password is configured, a server that lets us in without asking for it is refused, as libpq's
 * `require_auth` does), the backend's key for cancel requests and its parameters. Every server message is untrusted; every failure is a typed DbError carrying the
 * redacted connection, never the password.
 */
import type { AuthenticationMD5Password, BackendKeyDataMessage, DatabaseError, ParameterStatusMessage, ReadyForQueryMessage } from 'pg-protocol/dist/messages.js';
import { serialize } from 'pg-protocol';
import { AuthFailed, AuthMethodRefused, ConnectFailed, DbError, ProtocolError } from '../errors.js';
import { md5PasswordMessage, ScramClient } from './auth.js';
import type { BackendKey } from './cancel.js';
import type { ResolvedPgConfig } from './config.js';
import { Msg, type MessageParser } from './frames.js';
import { startupError } from './server-error.js';

/** Server parameters kept (the server sends about 15). */
const MAX_SERVER_PARAMS = 128;
/** Authentication request codes we do not implement. */
const UNSUPPORTED_AUTH: Readonly<Record<number, string>> = { 2: 'Kerberos V5', 6: 'SCM credential', 7: 'GSSAPI', 8: 'GSSAPI', 9: 'SSPI' };

interface SaslMessage {
  readonly name: string;
  readonly mechanisms?: string[];
  readonly data?: string;
}

export class Handshake {
  key: BackendKey | null = null;
  readonly serverParams: Record<string, string> = {};
  #scram: ScramClient | null = null;
  #scramVerified = false;
  /** The server asked for the password and got it (cleartext, MD5) or proved it knows it (SCRAM). */
  #authenticated = false;
  #authOk = false;
  /** Held only until the first ReadyForQuery, in a private field (never in an inspectable property). */
  #secret: string | undefined;

  constructor(
    private readonly config: ResolvedPgConfig,
    password: string | undefined,
    private readonly write: (message: Buffer) => void,
    /** Runs slow work (the SCRAM key derivation) off the loop; the connection writes its result when it settles. */
    private readonly later: (work: Promise<Buffer>) => void,
  ) {
    this.#secret = password;
  }

  startupMessage(): Buffer {
    // The text decoders read ISO dates and UTF-8 text; a server default of another DateStyle or
    // encoding would make them misread values, so both are fixed here and reserved in config.
    return serialize.startup({ user: this.config.user, database: this.config.database, ...this.config.startup, client_encoding: 'UTF8', DateStyle: 'ISO, MDY' });
  }

  /** Handles one startup message; returns true at the first ReadyForQuery. Throws DbError on failure. */
  handle(type: number, buf: Buffer, start: number, end: number, parser: MessageParser): boolean {
    try {
      return this.#handle(type, buf, start, end, parser);
    } catch (error) {
      throw this.redacted(error);
    }
  }

  #handle(type: number, buf: Buffer, start: number, end: number, parser: MessageParser): boolean {
    if (type === Msg.Authentication) {
      const code = end - start >= 4 ? buf.readInt32BE(start) : -1;
      const unsupported = UNSUPPORTED_AUTH[code];
      if (unsupported !== undefined) throw new ConnectFailed(`the server asked for ${unsupported} authentication, which is not supported`);
      this.#authenticate(parser.parse(type, buf, start, end));
      return false;
    }
    switch (type) {
      case Msg.BackendKeyData: {
        const key = parser.parse(type, buf, start, end) as BackendKeyDataMessage;
        this.key = { processId: key.processID, secretKey: key.secretKey };
        return false;
      }
      case Msg.ParameterStatus: {
        const status = parser.parse(type, buf, start, end) as ParameterStatusMessage;
        if (status.parameterName in this.serverParams || Object.keys(this.serverParams).length < MAX_SERVER_PARAMS) {
          this.serverParams[status.parameterName] = status.parameterValue;
        }
        return false;
      }
      case Msg.NoticeResponse:
        parser.parse(type, buf, start, end);
        return false;
      case Msg.ErrorResponse:
        throw startupError(parser.parse(type, buf, start, end) as DatabaseError, this.config.redacted);
      case Msg.ReadyForQuery: {
        const ready = parser.parse(type, buf, start, end) as ReadyForQueryMessage;
        if (ready.status !== 'I') throw new ProtocolError(`first ReadyForQuery reports transaction status '${ready.status}'`);
        if (this.#scram !== null && !this.#scramVerified) throw new AuthFailed('the server skipped the SCRAM final message (it never proved it knows the password)');
        if (!this.#authOk) throw new ProtocolError('ReadyForQuery before AuthenticationOk');
        this.#secret = undefined;
        this.#scram = null;
        return true;
      }
      default:
        throw new ProtocolError(`unexpected message '${String.fromCharCode(type)}' during startup`);
    }
  }

  #authenticate(message: { readonly name: string }): void {
    switch (message.name) {
      case 'authenticationOk':
        if (this.#scram !== null && !this.#scramVerified) throw new AuthFailed('the server accepted the login before proving it knows the password (SCRAM final missing)');
        // Without this, anything answering on the port (a hijacked address, a rogue server) gets
        // our queries: it never had to show that it knows the password.
        if (this.config.requireAuth && !this.#authenticated) throw new AuthMethodRefused('no', 'requireAuth: false');
        this.#authOk = true;
        return;
      case 'authenticationCleartextPassword':
        if (!this.config.allowCleartext) throw new AuthMethodRefused('cleartext password', 'allowCleartext');
        this.write(serialize.password(this.#password()));
        this.#authenticated = true;
        return;
      case 'authenticationMD5Password':
        if (!this.config.allowMd5) throw new AuthMethodRefused('MD5 password', 'allowMd5');
        this.write(serialize.password(md5PasswordMessage(this.config.user, this.#password(), (message as AuthenticationMD5Password).salt)));
        this.#authenticated = true;
        return;
      case 'authenticationSASL': {
        const mechanisms = (message as SaslMessage).mechanisms ?? [];
        if (this.#scram !== null) throw new ProtocolError('a second SASL exchange was started');
        if (!mechanisms.includes('SCRAM-SHA-256')) {
          throw new ConnectFailed(`the server offers SASL mechanisms ${JSON.stringify(mechanisms.slice(0, 8))}, none of them SCRAM-SHA-256`);
        }
        this.#scram = new ScramClient(this.#password());
        this.write(serialize.sendSASLInitialResponseMessage('SCRAM-SHA-256', this.#scram.clientFirstMessage()));
        return;
      }
      case 'authenticationSASLContinue':
        if (this.#scram === null) throw new ProtocolError('SASL continue without a SASL exchange');
        this.later(this.#scram.clientFinalMessage((message as SaslMessage).data ?? '').then((final) => serialize.sendSCRAMClientFinalMessage(final)));
        return;
      case 'authenticationSASLFinal':
        if (this.#scram === null) throw new ProtocolError('SASL final without a SASL exchange');
        this.#scram.verifyServerFinal((message as SaslMessage).data ?? '');
        this.#scramVerified = true;
        this.#authenticated = true;
        return;
      default:
        throw new ProtocolError(`unexpected authentication message ${message.name}`);
    }
  }

  #password(): string {
    if (this.#secret === undefined) throw new AuthFailed(`the server asks for a password and none is configured (user ${this.config.user})`);
    return this.#secret;
  }

  /** Every startup failure names the server (redacted); errors of other kinds become ProtocolError. */
  redacted(error: unknown): DbError {
    const failure = error instanceof DbError ? error : new ProtocolError(String((error as Error)?.message ?? error), { cause: error });
    if (failure.connection === undefined) Object.assign(failure, { connection: this.config.redacted });
    return failure;
  }
}

/**
 * COPY, the actor's side. A COPY is a simple Query; the server answers CopyInResponse (then takes
 * CopyData until CopyDone or CopyFail) or CopyOutResponse (then sends CopyData until CopyDone).
 * Either way the socket belongs to the COPY until its ReadyForQuery.
 *
 * Backpressure both ways: a CopyData call is answered once the socket took the bytes (at 'drain'
 * when its buffer was full), so the writer never runs ahead of the network; COPY TO's chunks wait
 * here until the reader asks, and past HIGH_WATER bytes the socket stops reading until it does.
 */
import { serialize } from 'pg-protocol';
import { NO_REPLY } from '../../behaviours/index.js';
import { DbError } from '../errors.js';
import { Cancel, OpKind, type Op, type Replier, type SessionHost } from './ops.js';
import type { CopyInData, CopyInEnd, CopyInFail, CopyOutRead } from './requests.js';
import { CopyInFail as Fail } from './requests.js';

/** COPY TO data held for a slow reader before the socket pauses. */
export const COPY_HIGH_WATER_BYTES = 1024 * 1024;
/** CopyData messages carry at most this much; larger chunks are split. */
const COPY_MESSAGE_BYTES = 1024 * 1024;

export class CopySession {
  /** COPY FROM: a CopyData call waiting for the socket to drain. */
  writer: Replier | null = null;
  /** COPY FROM: CopyDone or CopyFail written. */
  ending: 'done' | 'fail' | null = null;
  /** COPY TO: chunks not yet read, and a read waiting for some. */
  chunks: Buffer[] = [];
  bytes = 0;
  reader: Replier | null = null;
  paused = false;
  /** ReadyForQuery came: no more data. */
  over = false;

  static data(host: SessionHost, request: CopyInData, from: Replier): unknown {
    const op = host.sessions.get(request.copy);
    if (op === undefined) return over(host);
    const session = op.session as CopySession;
    if (op.error !== null) return op.error;
    if (session.ending !== null || session.over) return over(host);
    const chunk = request.chunk;
    let room = true;
    for (let offset = 0; offset < chunk.length; offset += COPY_MESSAGE_BYTES) {
      room = host.writeNow(serialize.copyData(chunk.subarray(offset, offset + COPY_MESSAGE_BYTES)));
    }
    if (room) return undefined;
    session.writer = from;
    return NO_REPLY;
  }

  /** The socket drained: the waiting CopyData call may go on. */
  static drained(host: SessionHost): void {
    for (const op of host.sessions.values()) {
      const session = op.session;
      if (session instanceof CopySession && session.writer !== null) {
        session.writer.reply(undefined);
        session.writer = null;
      }
    }
  }

  /** CopyDone (answered with the Result at ReadyForQuery) or CopyFail (answered with nothing). */
  static end(host: SessionHost, request: CopyInEnd | CopyInFail, from: Replier): unknown {
    const op = host.sessions.get(request.copy);
    const failing = request instanceof Fail;
    if (op === undefined) return failing ? undefined : over(host);
    const session = op.session as CopySession;
    if (session.over || op.error !== null) {
      host.sessions.delete(request.copy);
      return failing ? undefined : (op.error ?? over(host));
    }
    if (session.ending !== null) return over(host);
    op.from = from;
    if (failing) session.#fail(host, (request as CopyInFail).reason);
    else {
      session.ending = 'done';
      host.writeNow(serialize.copyDone());
    }
    return NO_REPLY;
  }

  static read(host: SessionHost, request: CopyOutRead, from: Replier): unknown {
    const op = host.sessions.get(request.copy);
    if (op === undefined) return [];
    const session = op.session as CopySession;
    if (session.chunks.length > 0) return session.take(host);
    if (session.over) {
      host.sessions.delete(request.copy);
      return op.error ?? [];
    }
    if (op.error !== null) return op.error;
    session.reader = from;
    return NO_REPLY;
  }

  /** CopyInResponse / CopyOutResponse: the start call is answered (or, if it expired meanwhile, COPY FROM is failed). */
  started(host: SessionHost, op: Op): void {
    if (op.cancel !== Cancel.None && op.kind === OpKind.CopyIn) return this.#fail(host, op.error?.message ?? 'cancelled');
    op.answer(undefined);
  }

  chunk(host: SessionHost, op: Op, data: Buffer): void {
    if (op.cancel !== Cancel.None || op.error !== null) return;
    this.chunks.push(data);
    this.bytes += data.length;
    if (this.reader !== null) {
      const reader = this.reader;
      this.reader = null;
      reader.reply(this.take(host));
      return;
    }
    if (this.bytes >= COPY_HIGH_WATER_BYTES && !this.paused) {
      this.paused = true;
      host.pauseReading(true);
    }
  }

  take(host: SessionHost): Buffer[] {
    const chunks = this.chunks;
    this.chunks = [];
    this.bytes = 0;
    if (this.paused) {
      this.paused = false;
      host.pauseReading(false);
    }
    return chunks;
  }

  /** The server reported an error (or a row was too large): whoever waits hears it. */
  failed(host: SessionHost, op: Op): void {
    this.#tell(op.error!);
    this.chunks = [];
    if (this.paused) {
      this.paused = false;
      host.pauseReading(false);
    }
  }

  expired(host: SessionHost, op: Op, error: DbError, idle: boolean): void {
    this.#tell(error);
    this.chunks = [];
    if (this.paused) {
      this.paused = false;
      host.pauseReading(false);
    }
    // A backend waiting for COPY data may not notice a cancel: end the COPY from this side.
    if (op.kind === OpKind.CopyIn && idle) this.#fail(host, error.message);
  }

  #fail(host: SessionHost, reason: string): void {
    if (this.ending !== null) return;
    this.ending = 'fail';
    host.writeNow(serialize.copyFail(reason.replace(/\0/g, '').slice(0, 512)));
  }

  /** ReadyForQuery: the COPY is over. */
  finished(host: SessionHost, op: Op): void {
    this.over = true;
    if (op.kind === OpKind.CopyIn) {
      if (this.ending === 'fail') op.answer(undefined);
      else op.answer(op.outcome(host.config.redacted));
      // Kept after an error until the writer ends it, so its next write hears the real cause.
      if (this.ending !== null) host.sessions.delete(op.request);
      if (op.error !== null) this.#tell(op.error);
      return;
    }
    if (!op.answered) op.answer(op.error ?? over(host));
    if (this.reader !== null) {
      const reader = this.reader;
      this.reader = null;
      host.sessions.delete(op.request);
      reader.reply(op.error ?? []);
    }
  }

  lost(_op: Op, error: DbError): void {
    this.#tell(error);
  }

  #tell(error: DbError): void {
    this.writer?.reply(error);
    this.writer = null;
    this.reader?.reply(error);
    this.reader = null;
  }
}

function over(host: SessionHost): DbError {
  return new DbError('the COPY is over', { connection: host.config.redacted });
}

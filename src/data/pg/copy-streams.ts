/**
 * COPY as Node streams, the handle's side. `CopyInStream` is a Writable (`pipeline(source, copyIn)`
 * resolves once the server has committed the rows; `result` then holds the command's Result);
 * `CopyOutStream` is a Readable of Buffers (also an async iterable). Each stream's calls go to the
 * connection actor; backpressure is the actor answering only when the socket took the data, or
 * when data arrived.
 */
import { Readable, Writable } from 'node:stream';
import type { Result } from '../values.js';
import { CopyInData, CopyInEnd, CopyInFail, CopyInStart, CopyOutRead, CopyOutStart } from './requests.js';

/** Makes one call to the connection actor (with the handle's error mapping and abort wiring). */
export type CopyCall = (request: object, identity: object, timeoutMs: number) => Promise<unknown>;

export class CopyInStream extends Writable {
  /** The COPY's Result (`affected` = rows copied), once the stream has finished. */
  result: Result | undefined = undefined;
  readonly #start: CopyInStart;
  readonly #call: CopyCall;
  #started = false;
  #ended = false;

  constructor(call: CopyCall, sql: string, timeoutMs: number) {
    super({ highWaterMark: 256 * 1024 });
    this.#call = call;
    this.#start = new CopyInStart(sql, timeoutMs);
  }

  override _construct(callback: (error?: Error | null) => void): void {
    sendStart(this.#call, this.#start, () => (this.#started = true), callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#call(new CopyInData(this.#start, chunk), this.#start, this.#start.timeoutMs).then(
      () => callback(),
      (error: Error) => callback(error),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#ended = true;
    this.#call(new CopyInEnd(this.#start), this.#start, this.#start.timeoutMs).then(
      (result) => {
        this.result = result as Result;
        callback();
      },
      (error: Error) => callback(error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#started || this.#ended) return callback(error);
    this.#ended = true;
    // The server rolls the COPY back on CopyFail.
    const reason = error?.message ?? 'the COPY stream was destroyed';
    this.#call(new CopyInFail(this.#start, reason), this.#start, this.#start.timeoutMs).then(
      () => callback(error),
      () => callback(error),
    );
  }
}

export class CopyOutStream extends Readable {
  readonly #start: CopyOutStart;
  readonly #call: CopyCall;
  readonly #abandon: (identity: object) => void;
  #reading = false;
  #over = false;
  #started = false;

  constructor(call: CopyCall, abandon: (identity: object) => void, sql: string, timeoutMs: number) {
    super({ highWaterMark: 256 * 1024 });
    this.#call = call;
    this.#abandon = abandon;
    this.#start = new CopyOutStart(sql, timeoutMs);
  }

  override _construct(callback: (error?: Error | null) => void): void {
    sendStart(this.#call, this.#start, () => (this.#started = true), callback);
  }

  override _read(): void {
    if (this.#reading) return;
    this.#reading = true;
    this.#call(new CopyOutRead(this.#start), this.#start, this.#start.timeoutMs).then(
      (chunks) => {
        this.#reading = false;
        const list = chunks as Buffer[];
        if (list.length === 0) {
          this.#over = true;
          this.push(null);
          return;
        }
        let more = true;
        for (const chunk of list) more = this.push(chunk);
        if (more) this._read();
      },
      (error: Error) => {
        this.#reading = false;
        this.#over = true;
        this.destroy(error);
      },
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#started || this.#over) return callback(error);
    this.#over = true;
    // Stopped early: the rest of the COPY is cancelled rather than read and thrown away.
    this.#abandon(this.#start);
    callback(error);
  }
}

/** A COPY's start for a stream's `_construct`: `started` runs before the callback on success. */
function sendStart(call: CopyCall, start: CopyInStart | CopyOutStart, started: () => void, callback: (error?: Error | null) => void): void {
  call(start, start, start.timeoutMs).then(
    () => {
      started();
      callback();
    },
    (error: Error) => callback(error),
  );
}

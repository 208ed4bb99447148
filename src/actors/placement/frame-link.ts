/**
 * One side of the byte channel between the main system and a host, framed by Molo itself so that
 * nothing from the other side is parsed by anyone else first (Node's `advanced` IPC serialization
 * deserialized whatever a child wrote, and a worker's structured clone copied whatever it posted).
 *
 * On the wire a channel carries records: `u32 length` then `length` bytes (a frame: 4-byte header and
 * msgpack body). A record of length 0 is a credit: the next `u32` is a count of bytes the other side
 * has consumed. The length is checked against the cap before a byte of the body is buffered.
 *
 * Flow control: a sender may have at most `budgetBytes` of records unacknowledged by credits. User
 * frames (sends and calls) that do not fit are refused, so the caller applies the target mailbox's
 * overflow policy; signals are never refused but wait (in order) for credit. A receiver acknowledges
 * what it consumed once that reaches a quarter of the budget, and treats a peer that sends more than
 * the budget unacknowledged, a record over the cap, or anything but bytes as hostile: a violation,
 * after which the link reads nothing more.
 *
 * Outgoing records are gathered per tick into one exact-size buffer (transferred, not copied, to a
 * worker thread): a small frame never drags a shared 8 KiB pool slab across the boundary.
 */

/** Where a link writes: each call hands over an exact-size buffer the wire may take ownership of. */
export interface LinkWire {
  write(batch: Uint8Array): void;
  /**
   * Memory for a batch of `bytes`; a fresh exact-size buffer when absent (what a thread needs, to
   * transfer it). A socket may take a slice of a shared pool: the kernel copies it anyway.
   */
  alloc?(bytes: number): Uint8Array;
}

export interface LinkEvents {
  /** A record (a frame) arrived; the view is valid during the call. */
  record(bytes: Uint8Array): void;
  /** The peer broke the channel's rules; the link is closed. */
  violation(why: string): void;
}

export interface LinkLimits {
  /** Largest record accepted (a frame's header plus the payload cap). */
  readonly maxRecordBytes: number;
  /** Bytes one side may have unacknowledged; at least twice the largest record. */
  readonly budgetBytes: number;
  /**
   * Signals held for credit beyond which `send(…, 'forwarded')` refuses: a bound on what one host
   * can make the main system hold for another.
   */
  readonly maxWaitingBytes: number;
}

const LENGTH_BYTES = 4;
const CREDIT_RECORD_BYTES = 8;
// A resolved promise's then costs less than queueMicrotask, which wraps each callback in an AsyncResource.
const RESOLVED = Promise.resolve();

/** `user`: refused over budget; `signal`: always taken (waits for credit); `forwarded`: a signal, refused past the waiting cap. */
export type SendMode = 'user' | 'signal' | 'forwarded';

export class FrameLink {
  readonly #limits: LinkLimits;
  readonly #wire: LinkWire;
  readonly #events: LinkEvents;
  #closed = false;

  // outgoing
  #unacked = 0;
  #batch: Uint8Array[] = [];
  #batchBytes = 0;
  #waiting: Uint8Array[] = [];
  #waitingBytes = 0;
  #creditOwed = 0;
  #flushQueued = false;
  readonly #flush = (): void => this.flush();

  // incoming
  readonly #head = new Uint8Array(CREDIT_RECORD_BYTES);
  readonly #headView = new DataView(this.#head.buffer);
  #headFill = 0;
  #body: Uint8Array | undefined;
  #bodyFill = 0;
  /** Received and not yet acknowledged by a credit from here. */
  #uncredited = 0;
  /** Consumed since the last credit was owed. */
  #consumed = 0;

  /** Bytes written to the wire, records and credits. */
  bytesWritten = 0;
  bytesRead = 0;

  constructor(limits: LinkLimits, wire: LinkWire, events: LinkEvents) {
    this.#limits = limits;
    this.#wire = wire;
    this.#events = events;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes sent or queued and not yet acknowledged, plus signals waiting for credit. */
  get inFlightBytes(): number {
    return this.#unacked + this.#waitingBytes;
  }

  /** Queues a record; false (nothing queued) when a user frame does not fit the budget. */
  send(record: Uint8Array, mode: SendMode): boolean {
    if (this.#closed) return mode !== 'user';
    const size = LENGTH_BYTES + record.byteLength;
    const budget = this.#limits.budgetBytes;
    if (mode === 'user' && this.#unacked + this.#waitingBytes + size > budget) return false;
    if (mode === 'forwarded' && this.#waitingBytes + size > this.#limits.maxWaitingBytes) return false;
    if (this.#waiting.length === 0 && this.#unacked + size <= budget) {
      this.#unacked += size;
      this.#batch.push(record);
      this.#batchBytes += size;
      this.#schedule();
    } else {
      this.#waiting.push(record);
      this.#waitingBytes += size;
    }
    return true;
  }

  /** Stops reading and writing: later records are ignored, queued ones discarded. */
  close(): void {
    this.#closed = true;
    this.#batch = [];
    this.#waiting = [];
    this.#batchBytes = this.#waitingBytes = 0;
    this.#body = undefined;
  }

  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    void RESOLVED.then(this.#flush);
  }

  /** Writes what this tick queued as one exact-size buffer. */
  flush(): void {
    this.#flushQueued = false;
    if (this.#closed) return;
    const credit = this.#creditOwed;
    const total = this.#batchBytes + (credit > 0 ? CREDIT_RECORD_BYTES : 0);
    if (total === 0) return;
    const out = this.#wire.alloc?.(total) ?? new Uint8Array(total);
    let offset = 0;
    if (credit > 0) {
      writeU32(out, 0, 0);
      writeU32(out, LENGTH_BYTES, credit);
      offset = CREDIT_RECORD_BYTES;
      this.#creditOwed = 0;
    }
    for (const record of this.#batch) {
      writeU32(out, offset, record.byteLength);
      out.set(record, offset + LENGTH_BYTES);
      offset += LENGTH_BYTES + record.byteLength;
    }
    this.#batch = [];
    this.#batchBytes = 0;
    this.bytesWritten += total;
    this.#wire.write(out);
  }

  #credited(bytes: number): void {
    if (bytes > this.#unacked) {
      this.#violate(`credit of ${bytes} bytes for ${this.#unacked} sent`);
      return;
    }
    this.#unacked -= bytes;
    const budget = this.#limits.budgetBytes;
    while (this.#waiting.length > 0) {
      const record = this.#waiting[0]!;
      const size = LENGTH_BYTES + record.byteLength;
      if (this.#unacked + size > budget) break;
      this.#waiting.shift();
      this.#waitingBytes -= size;
      this.#unacked += size;
      this.#batch.push(record);
      this.#batchBytes += size;
      this.#schedule();
    }
  }

  #violate(why: string): void {
    if (this.#closed) return;
    this.close();
    this.#events.violation(why);
  }

  /**
   * Bytes from the peer: a whole batch (thread) or any slice of the stream (process). Complete
   * records inside `chunk` are handed over as views, without copying.
   */
  receive(chunk: Uint8Array): void {
    if (this.#closed) return;
    this.bytesRead += chunk.byteLength;
    let offset = 0;
    const end = chunk.byteLength;
    while (offset < end && !this.#closed) {
      if (this.#body !== undefined) {
        const take = Math.min(end - offset, this.#body.byteLength - this.#bodyFill);
        this.#body.set(chunk.subarray(offset, offset + take), this.#bodyFill);
        this.#bodyFill += take;
        offset += take;
        if (this.#bodyFill === this.#body.byteLength) {
          const body = this.#body;
          this.#body = undefined;
          this.#deliver(body);
        }
        continue;
      }
      // The length (and a credit's count): gathered in #head when split across chunks.
      let length: number;
      let headStart: number;
      if (this.#headFill === 0 && end - offset >= LENGTH_BYTES) {
        length = readU32(chunk, offset);
        headStart = offset;
      } else {
        const take = Math.min(end - offset, LENGTH_BYTES - this.#headFill);
        if (take > 0) this.#head.set(chunk.subarray(offset, offset + take), this.#headFill);
        this.#headFill += take;
        offset += take;
        if (this.#headFill < LENGTH_BYTES) break;
        length = this.#headView.getUint32(0);
        headStart = -1;
      }
      if (length === 0) {
        // A credit: four more bytes.
        let credit: number;
        if (headStart >= 0 && end - headStart >= CREDIT_RECORD_BYTES) {
          credit = readU32(chunk, headStart + LENGTH_BYTES);
          offset = headStart + CREDIT_RECORD_BYTES;
        } else {
          if (headStart >= 0) {
            this.#head.set(chunk.subarray(headStart, headStart + LENGTH_BYTES), 0);
            this.#headFill = LENGTH_BYTES;
            offset = headStart + LENGTH_BYTES;
          }
          const take = Math.min(end - offset, CREDIT_RECORD_BYTES - this.#headFill);
          this.#head.set(chunk.subarray(offset, offset + take), this.#headFill);
          this.#headFill += take;
          offset += take;
          if (this.#headFill < CREDIT_RECORD_BYTES) break;
          credit = this.#headView.getUint32(LENGTH_BYTES);
        }
        this.#headFill = 0;
        this.#credited(credit);
        continue;
      }
      if (headStart >= 0) offset = headStart + LENGTH_BYTES;
      this.#headFill = 0;
      // Checked before any of the body is buffered.
      if (length > this.#limits.maxRecordBytes) {
        this.#violate(`a record of ${length} bytes, over the cap of ${this.#limits.maxRecordBytes}`);
        return;
      }
      this.#uncredited += LENGTH_BYTES + length;
      if (this.#uncredited > this.#limits.budgetBytes) {
        this.#violate(`${this.#uncredited} bytes unacknowledged, over the budget of ${this.#limits.budgetBytes}`);
        return;
      }
      if (end - offset >= length) {
        const record = chunk.subarray(offset, offset + length);
        offset += length;
        this.#deliver(record);
      } else {
        this.#body = new Uint8Array(length);
        this.#bodyFill = 0;
      }
    }
    this.#maybeCredit();
  }

  #deliver(record: Uint8Array): void {
    this.#consumed += LENGTH_BYTES + record.byteLength;
    this.#events.record(record);
  }

  #maybeCredit(): void {
    if (this.#closed || this.#consumed < this.#limits.budgetBytes / 4) return;
    this.#creditOwed += this.#consumed;
    this.#uncredited -= this.#consumed;
    this.#consumed = 0;
    this.#schedule();
  }
}

function writeU32(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value >>> 24;
  bytes[offset + 1] = (value >>> 16) & 0xff;
  bytes[offset + 2] = (value >>> 8) & 0xff;
  bytes[offset + 3] = value & 0xff;
}

function readU32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

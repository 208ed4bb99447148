/**
 * The read path: splits the server's byte stream into messages, checks each type byte and length,
 * decodes DataRows straight from the socket buffer, and hands every other complete message to
 * pg-protocol's Parser.
 *
 * Why not pg-protocol's Parser for everything: it decodes every DataRow field as a UTF-8 string
 * (binary columns come out corrupted), and it trusts its input: an ErrorResponse whose fields run
 * past the end of the message makes it loop forever, and short messages make it throw RangeErrors.
 * Here every message is framed and checked first, so random or truncated bytes end in a
 * ProtocolError, never a crash or a hang.
 */
import { Parser } from 'pg-protocol/dist/parser.js';
import type { BackendMessage } from 'pg-protocol/dist/messages.js';
import { MAX_ROW_BYTES } from '../database.js';
import { ProtocolError } from '../errors.js';
import type { Row } from '../values.js';

/** Backend message type bytes. */
export const Msg = {
  Authentication: 0x52, // R
  ParameterStatus: 0x53, // S
  BackendKeyData: 0x4b, // K
  ReadyForQuery: 0x5a, // Z
  RowDescription: 0x54, // T
  DataRow: 0x44, // D
  CommandComplete: 0x43, // C
  ErrorResponse: 0x45, // E
  NoticeResponse: 0x4e, // N
  ParseComplete: 0x31, // 1
  BindComplete: 0x32, // 2
  CloseComplete: 0x33, // 3
  NoData: 0x6e, // n
  PortalSuspended: 0x73, // s
  EmptyQueryResponse: 0x49, // I
  ParameterDescription: 0x74, // t
  NotificationResponse: 0x41, // A
  CopyInResponse: 0x47, // G
  CopyOutResponse: 0x48, // H
  CopyData: 0x64, // d
  CopyDone: 0x63, // c
} as const;

/** Per type byte: -1 not a message we accept, 0 any length, n exactly n (the length field's value). */
const LENGTH_RULE = new Int32Array(256).fill(-1);
for (const type of Object.values(Msg)) LENGTH_RULE[type] = 0;
LENGTH_RULE[Msg.ReadyForQuery] = 5;
LENGTH_RULE[Msg.BackendKeyData] = 12;
for (const type of [Msg.ParseComplete, Msg.BindComplete, Msg.CloseComplete, Msg.NoData, Msg.PortalSuspended, Msg.EmptyQueryResponse, Msg.CopyDone]) {
  LENGTH_RULE[type] = 4;
}

const HEADER = 5;

export interface FrameSink {
  /** One complete message: its body is `buf[start, end)` (after the 5-byte header). */
  frame(type: number, buf: Buffer, start: number, end: number): void;
  /** A DataRow or CopyData longer than MAX_ROW_BYTES was announced; its bytes are skipped, unbuffered. */
  oversized(type: number, bytes: number): void;
}

/**
 * Splits chunks into messages. Partial messages wait for the next chunk; a message arriving over
 * many chunks is gathered once (no quadratic re-concatenation). Buffers handed to the sink are
 * never written again, so decoded values may not alias them only by the codecs' own rule.
 */
export class Framer {
  /** Chunks of the incomplete message at the front of the stream. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Bytes needed before the front message can be handled: 5 until the header is known. */
  #need = HEADER;
  /** Bytes of an oversized row still to discard. */
  #skip = 0;

  /** Bytes held waiting for the rest of a message. */
  get buffered(): number {
    return this.#pendingBytes;
  }

  /** Feeds one chunk; throws ProtocolError on a bad type byte or length (the stream is then unusable). */
  push(chunk: Buffer, sink: FrameSink): void {
    if (this.#skip > 0) {
      if (chunk.length <= this.#skip) {
        this.#skip -= chunk.length;
        return;
      }
      chunk = chunk.subarray(this.#skip);
      this.#skip = 0;
    }
    let buf: Buffer;
    if (this.#pendingBytes === 0) buf = chunk;
    else {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#pendingBytes < this.#need) return;
      buf = Buffer.concat(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    const len = buf.length;
    let pos = 0;
    while (pos + HEADER <= len) {
      const type = buf[pos]!;
      const length = buf.readUInt32BE(pos + 1);
      const rule = LENGTH_RULE[type]!;
      if (rule < 0) throw new ProtocolError(`unexpected message type 0x${type.toString(16).padStart(2, '0')}`);
      if (length < 4 || (rule > 0 && length !== rule)) throw new ProtocolError(`bad length ${length} for message '${String.fromCharCode(type)}'`);
      if (length - 4 > MAX_ROW_BYTES) {
        if (type !== Msg.DataRow && type !== Msg.CopyData) throw new ProtocolError(`message '${String.fromCharCode(type)}' of ${length} bytes exceeds MAX_ROW_BYTES`);
        sink.oversized(type, length - 4);
        const end = pos + 1 + length;
        if (end <= len) {
          pos = end;
          continue;
        }
        this.#skip = end - len;
        this.#need = HEADER;
        return;
      }
      const end = pos + 1 + length;
      if (end > len) {
        this.#need = 1 + length;
        this.#keep(buf, pos);
        return;
      }
      sink.frame(type, buf, pos + HEADER, end);
      pos = end;
    }
    this.#need = HEADER;
    if (pos < len) this.#keep(buf, pos);
  }

  #keep(buf: Buffer, pos: number): void {
    const rest = pos === 0 ? buf : buf.subarray(pos);
    this.#pending = [rest];
    this.#pendingBytes = rest.length;
  }

  /** Forgets everything buffered (the connection is closing). */
  reset(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#need = HEADER;
    this.#skip = 0;
  }
}

// ---- DataRow -------------------------------------------------------------------------------

export type ColumnDecoder = (buf: Buffer, start: number, end: number) => unknown;

/** What a DataRow needs to become a row: the column names and one decoder per column. */
export interface RowShape {
  readonly names: readonly string[];
  readonly decoders: readonly ColumnDecoder[];
}

/** Decodes one DataRow body into an object keyed by column name; malformed bytes throw ProtocolError. */
export function decodeDataRow(buf: Buffer, start: number, end: number, shape: RowShape): Row {
  if (end - start < 2) throw new ProtocolError('DataRow shorter than its column count');
  const count = buf.readInt16BE(start);
  const names = shape.names;
  const decoders = shape.decoders;
  if (count !== names.length) throw new ProtocolError(`DataRow has ${count} columns, RowDescription ${names.length}`);
  const row: Row = {};
  let pos = start + 2;
  for (let i = 0; i < count; i++) {
    if (pos + 4 > end) throw new ProtocolError('DataRow truncated');
    const size = buf.readInt32BE(pos);
    pos += 4;
    if (size === -1) {
      row[names[i]!] = null;
      continue;
    }
    if (size < 0 || pos + size > end) throw new ProtocolError('DataRow field length out of bounds');
    row[names[i]!] = decoders[i]!(buf, pos, pos + size);
    pos += size;
  }
  if (pos !== end) throw new ProtocolError('DataRow has trailing bytes');
  return row;
}

/**
 * Whether a DataRow is well framed (its fields fill it exactly). A decode that threw on a
 * well-framed row failed on a value: that statement fails, the connection goes on.
 */
export function wellFramedRow(buf: Buffer, start: number, end: number, columns: number): boolean {
  if (end - start < 2 || buf.readInt16BE(start) !== columns) return false;
  let pos = start + 2;
  for (let i = 0; i < columns; i++) {
    if (pos + 4 > end) return false;
    const size = buf.readInt32BE(pos);
    pos += 4;
    if (size === -1) continue;
    if (size < 0 || pos + size > end) return false;
    pos += size;
  }
  return pos === end;
}

// ---- everything else: pg-protocol ------------------------------------------------------------

/**
 * Parses one complete non-DataRow message with pg-protocol's Parser, after the checks it lacks.
 * `buf[start, end)` is the body; the 5 header bytes precede it in the same buffer.
 */
export class MessageParser {
  #parser = new Parser();
  #last: BackendMessage | undefined = undefined;
  readonly #capture = (message: BackendMessage): void => {
    this.#last = message;
  };

  parse(type: number, buf: Buffer, start: number, end: number): BackendMessage {
    if (type === Msg.ErrorResponse || type === Msg.NoticeResponse) checkFields(buf, start, end);
    else if (type === Msg.Authentication && end - start < 4) throw new ProtocolError('Authentication message too short');
    this.#last = undefined;
    try {
      this.#parser.parse(buf.subarray(start - HEADER, end), this.#capture);
    } catch (error) {
      // A throw leaves the parser holding the partial buffer: start over with a fresh one.
      this.#parser = new Parser();
      throw new ProtocolError(`malformed '${String.fromCharCode(type)}' message: ${(error as Error).message}`, { cause: error });
    }
    const message = this.#last as BackendMessage | undefined;
    if (message === undefined) throw new ProtocolError(`'${String.fromCharCode(type)}' message not parsed`);
    // pg-protocol answers bytes it does not know with an error object rather than a throw.
    if (message.name === 'error' && type !== Msg.ErrorResponse) throw new ProtocolError(`unsupported message '${String.fromCharCode(type)}'`);
    return message;
  }
}

/** ErrorResponse/NoticeResponse: (type byte, cstring)* then a 0, all inside the message. */
function checkFields(buf: Buffer, start: number, end: number): void {
  let pos = start;
  for (;;) {
    if (pos >= end) throw new ProtocolError('error fields run past the message');
    if (buf[pos] === 0) {
      if (pos + 1 !== end) throw new ProtocolError('bytes after the error fields');
      return;
    }
    const nul = buf.indexOf(0, pos + 1);
    if (nul < 0 || nul >= end) throw new ProtocolError('unterminated error field');
    pos = nul + 1;
  }
}

/** A NUL-terminated string filling the body exactly (CommandComplete). */
export function cstringBody(buf: Buffer, start: number, end: number): string {
  if (end <= start || buf[end - 1] !== 0) throw new ProtocolError('unterminated string');
  return buf.toString('utf8', start, end - 1);
}

/**
 * The wire format of placement frames: msgpackr with extensions for refs (interned on decode),
 * errors (`{name, message, stack, code, cause}`) and the kernel's message classes, behind a
 * 4-byte header naming the creation of the system a frame is for, so the main system forwards
 * frames between hosts without decoding them.
 */
import { addExtension, Packr, Unpackr } from 'msgpackr';
import { MoloError, NotSerializable, PayloadTooLarge } from '../errors.js';
import type { ExitReason } from '../exit.js';
import { CallRequest, DownMessage, ExitMessage } from '../messages.js';
import { Ref } from '../ref.js';
import { checkFrame, type Frame } from './frames.js';
import { FRAME_HEADER_BYTES } from './limits.js';
import { processRefs, type RefTable } from './ref-table.js';
import { receiveWireClasses } from './wire-classes.js';

/** Bytes before the msgpack body: the destination creation, big-endian. */
export const HEADER_BYTES = FRAME_HEADER_BYTES;

const EXT_REF = 0x40;
const EXT_ERROR = 0x41;
const EXT_EXIT = 0x43;
const EXT_DOWN = 0x44;
const EXT_CALL = 0x45;
// Extension types 0x50..0x5f are for classes registered by higher layers: see wire-classes.ts.

interface ErrorData {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly stack?: unknown;
  readonly code?: unknown;
  readonly cause?: unknown;
}

/** Rebuilds an error that crossed a boundary: an `Error` with the original name, message, stack and code. */
function readError(data: unknown): Error {
  const fields = (typeof data === 'object' && data !== null ? data : {}) as ErrorData;
  const error = new Error(typeof fields.message === 'string' ? fields.message : String(fields.message ?? ''));
  const hidden = (key: string, value: unknown): void => {
    Object.defineProperty(error, key, { value, writable: true, configurable: true, enumerable: false });
  };
  if (typeof fields.name === 'string' && fields.name !== 'Error') hidden('name', fields.name);
  hidden('stack', typeof fields.stack === 'string' ? fields.stack : `${error.name}: ${error.message}`);
  if (typeof fields.code === 'string' || typeof fields.code === 'number') {
    (error as Error & { code?: unknown }).code = fields.code;
  }
  if (fields.cause !== undefined) hidden('cause', fields.cause);
  return error;
}

function writeError(error: Error): ErrorData {
  const code = (error as Error & { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    // Only an error cause travels: anything else could be unencodable, and is rarely meant to.
    cause: error.cause instanceof Error ? error.cause : undefined,
  };
}

/** The table refs are interned in and remembered to while a frame is encoded or decoded (synchronously). */
let refs: RefTable = processRefs;

/**
 * A ref on the wire: a layout byte, creation (u32), id (u32, or two u32 high first when it is
 * past 2^32: layout 1) and the node's name in UTF-8. Raw bytes rather than a msgpack array, so that
 * the node's name, the same in nearly every ref of a link, is compared with the last one seen
 * instead of decoded again.
 */
const SHORT_ID = 0;
const LONG_ID = 1;
const MAX_REF_ID = Number.MAX_SAFE_INTEGER;
let lastWritten: Ref | undefined;
let lastWrittenBytes: Buffer | undefined;
let lastNodeBytes: Uint8Array = new Uint8Array(0);
let lastNode = '';

function writeRef(ref: Ref): Buffer {
  refs.remember(ref);
  if (ref === lastWritten) return lastWrittenBytes!;
  const { id, creation } = ref;
  if (!Number.isInteger(id) || id < 0 || id > MAX_REF_ID || !Number.isInteger(creation) || creation < 0 || creation > 0xffff_ffff) {
    throw new TypeError(`a ref with id ${id} and creation ${creation} cannot be encoded`);
  }
  const node = Buffer.from(ref.node, 'utf8');
  const long = id > 0xffff_ffff;
  const fixed = long ? 13 : 9;
  const bytes = Buffer.allocUnsafe(fixed + node.length);
  bytes[0] = long ? LONG_ID : SHORT_ID;
  bytes.writeUInt32BE(creation, 1);
  if (long) {
    bytes.writeUInt32BE(Math.floor(id / 0x1_0000_0000), 5);
    bytes.writeUInt32BE(id >>> 0, 9);
  } else {
    bytes.writeUInt32BE(id, 5);
  }
  node.copy(bytes, fixed);
  lastWritten = ref;
  lastWrittenBytes = bytes;
  return bytes;
}

const u32 = (bytes: Uint8Array, at: number): number => ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

function readRef(bytes: Uint8Array): Ref {
  const layout = bytes[0];
  const fixed = layout === SHORT_ID ? 9 : layout === LONG_ID ? 13 : 0;
  if (fixed === 0 || bytes.length <= fixed) throw new TypeError('malformed ref');
  const id = layout === SHORT_ID ? u32(bytes, 5) : u32(bytes, 5) * 0x1_0000_0000 + u32(bytes, 9);
  if (id > MAX_REF_ID) throw new TypeError('malformed ref');
  return refs.intern(nodeName(bytes, fixed), id, u32(bytes, 1));
}

/** The node's name at `start` in a ref's bytes: the last one again when the bytes match it. */
function nodeName(bytes: Uint8Array, start: number): string {
  const length = bytes.length - start;
  const last = lastNodeBytes;
  if (last.length === length) {
    let same = true;
    for (let index = 0; index < length; index++) {
      if (last[index] !== bytes[start + index]) {
        same = false;
        break;
      }
    }
    if (same) return lastNode;
  }
  const node = Buffer.from(bytes.buffer, bytes.byteOffset + start, length).toString('utf8');
  lastNodeBytes = bytes.slice(start);
  lastNode = node;
  return node;
}

let registered = false;

function registerExtensions(): void {
  if (registered) return;
  registered = true;
  addExtension({ Class: Ref, type: EXT_REF, pack: writeRef, unpack: readRef });
  addExtension({ Class: Error, type: EXT_ERROR, write: writeError, read: readError });
  addExtension({
    Class: ExitMessage,
    type: EXT_EXIT,
    write: (message: ExitMessage) => [message.from, message.reason],
    read: (data: unknown) => {
      const [from, reason] = data as [Ref, ExitReason];
      if (!(from instanceof Ref)) throw new TypeError('malformed ExitMessage');
      return new ExitMessage(from, reason);
    },
  });
  addExtension({
    Class: DownMessage,
    type: EXT_DOWN,
    write: (message: DownMessage) => [message.monitor, message.ref, message.reason],
    read: (data: unknown) => {
      const [monitor, ref, reason] = data as [number, Ref, ExitReason];
      if (!(ref instanceof Ref)) throw new TypeError('malformed DownMessage');
      return new DownMessage(monitor, ref, reason);
    },
  });
  addExtension({
    Class: CallRequest,
    type: EXT_CALL,
    write(): never {
      throw new NotSerializable('a CallRequest (reply where the call arrived, or pass the value)');
    },
    read: () => undefined,
  });
}

registerExtensions();

// Classes registered by higher layers, now and later.
receiveWireClasses((definition) =>
  addExtension({ Class: definition.Class as never, type: definition.type, write: definition.write, read: definition.read }),
);

/**
 * Records (msgpackr's default) keep Maps apart from plain objects; each frame carries its own record
 * definitions, so no state is shared between the two sides. `moreTypes` keeps Sets, typed arrays
 * and undefined.
 */
const packr = new Packr({ moreTypes: true });
const unpackr = new Unpackr({ moreTypes: true });

function describeFailure(error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'the value is cyclic or too deeply nested';
  return error instanceof Error ? error.message : String(error);
}

/**
 * Encodes `frame` for the system of creation `destination`. Throws PayloadTooLarge when the body is
 * over `limitBytes`, NotSerializable when the value cannot be encoded. Refs in it are remembered in
 * `table` (the process's unless a node gives its own).
 */
export function encodeFrame(destination: number, frame: Frame, limitBytes: number, table: RefTable = processRefs): Buffer {
  let body: Uint8Array;
  refs = table;
  try {
    body = packr.pack(frame);
  } catch (error) {
    if (error instanceof MoloError) throw error;
    throw new NotSerializable(describeFailure(error), { cause: error });
  } finally {
    refs = processRefs;
  }
  if (body.length > limitBytes) throw new PayloadTooLarge(body.length, limitBytes);
  // The packer reuses its buffer: copy out before the next frame overwrites it.
  const bytes = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  bytes.writeUInt32BE(destination, 0);
  bytes.set(body, HEADER_BYTES);
  return bytes;
}

/** The creation a frame is for; undefined when there is no header. */
export function frameDestination(bytes: Uint8Array): number | undefined {
  if (bytes.byteLength < HEADER_BYTES) return undefined;
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

/** The body starts past the header: read in place, without a view of its own. */
const BODY = { start: HEADER_BYTES };

/**
 * Decodes and checks a frame; undefined when it is malformed (the caller counts and drops it). Refs
 * in it are interned in `table` (the process's unless a node gives its own).
 */
export function decodeFrame(bytes: Uint8Array, table: RefTable = processRefs): Frame | undefined {
  if (bytes.byteLength <= HEADER_BYTES) return undefined;
  let value: unknown;
  refs = table;
  try {
    value = unpackr.unpack(bytes, BODY);
  } catch {
    return undefined;
  } finally {
    refs = processRefs;
  }
  return checkFrame(value);
}

/**
 * A frame's kind without decoding it (a msgpack fixarray whose first element is a fixint), for
 * forwarding; undefined when the body does not start that way (decoding will drop it).
 */
export function peekFrameKind(bytes: Uint8Array): number | undefined {
  if (bytes.byteLength < HEADER_BYTES + 2) return undefined;
  const head = bytes[HEADER_BYTES]!;
  const kind = bytes[HEADER_BYTES + 1]!;
  return head >= 0x90 && head <= 0x9f && kind < 0x80 ? kind : undefined;
}

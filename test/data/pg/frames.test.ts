/**
 * The read path against hostile bytes: random and truncated streams fed to the framer directly
 * (fast-check, fixed seed), and a fake server speaking garbage through a real socket. Every
 * outcome is a message or a typed ProtocolError, never another exception or a hang.
 */
import { createServer, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ROW_BYTES } from '../../../src/data/database.js';
import { ConnectFailed, ConnectionLost, DbError, OutcomeUnknown, ProtocolError } from '../../../src/data/errors.js';
import { decodeDataRow, Framer, MessageParser, Msg, type FrameSink, type RowShape } from '../../../src/data/pg/frames.js';
import { connectPostgres } from '../../../src/data/pg/index.js';
import { testSystem } from '../../support/systems.js';

// ---- backend message builders ------------------------------------------------------------------

function message(type: number, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header[0] = type;
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const cstr = (s: string): Buffer => Buffer.concat([Buffer.from(s), Buffer.from([0])]);
const int16 = (n: number): Buffer => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

const authOk = message(Msg.Authentication, int32(0));
const keyData = message(Msg.BackendKeyData, Buffer.concat([int32(4242), int32(99)]));
const ready = message(Msg.ReadyForQuery, Buffer.from('I'));
const paramStatus = message(Msg.ParameterStatus, Buffer.concat([cstr('server_version'), cstr('15.0')]));
function rowDescription(names: string[]): Buffer {
  const fields = names.map((name) => Buffer.concat([cstr(name), int32(0), int16(0), int32(25), int16(-1), int32(-1), int16(0)]));
  return message(Msg.RowDescription, Buffer.concat([int16(names.length), ...fields]));
}
function dataRow(values: (string | null)[]): Buffer {
  const parts = values.map((v) => (v === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(v)), Buffer.from(v)])));
  return message(Msg.DataRow, Buffer.concat([int16(values.length), ...parts]));
}
const complete = (tag: string): Buffer => message(Msg.CommandComplete, cstr(tag));
const errorResponse = message(Msg.ErrorResponse, Buffer.concat([cstr('SERROR'), cstr('C42P01'), cstr('Mno such table'), Buffer.from([0])]));
const notification = message(Msg.NotificationResponse, Buffer.concat([int32(7), cstr('chan'), cstr('payload')]));

/** A plausible answer stream: every message kind the connection reads. */
const validStream = Buffer.concat([
  authOk,
  keyData,
  paramStatus,
  ready,
  rowDescription(['a', 'b']),
  dataRow(['1', 'x']),
  dataRow([null, 'héllo']),
  complete('SELECT 2'),
  notification,
  errorResponse,
  message(Msg.ParseComplete, Buffer.alloc(0)),
  message(Msg.BindComplete, Buffer.alloc(0)),
  message(Msg.NoData, Buffer.alloc(0)),
  message(Msg.ParameterDescription, Buffer.concat([int16(1), int32(23)])),
  message(Msg.EmptyQueryResponse, Buffer.alloc(0)),
  ready,
]);

const TEXT: RowShape = { names: ['a', 'b'], decoders: [(buf, s, e) => buf.toString('utf8', s, e), (buf, s, e) => buf.toString('utf8', s, e)] };

/** Decodes everything the framer hands out, as the connection would; records message types. */
class RecordingSink implements FrameSink {
  readonly types: number[] = [];
  readonly rows: unknown[] = [];
  oversizedBytes = 0;
  readonly #parser = new MessageParser();

  frame(type: number, buf: Buffer, start: number, end: number): void {
    this.types.push(type);
    if (type === Msg.DataRow) this.rows.push(decodeDataRow(buf, start, end, TEXT));
    else if (![Msg.ParseComplete, Msg.BindComplete, Msg.CloseComplete, Msg.NoData, Msg.PortalSuspended, Msg.EmptyQueryResponse, Msg.CopyDone, Msg.CopyData].includes(type as never)) {
      this.#parser.parse(type, buf, start, end);
    }
  }

  oversized(_type: number, bytes: number): void {
    this.oversizedBytes = bytes;
  }
}

/** Feeds `bytes` in the given chunk sizes; returns the sink, or the error thrown. */
function feed(bytes: Buffer, cuts: number[]): { sink: RecordingSink; framer: Framer; error?: unknown } {
  const framer = new Framer();
  const sink = new RecordingSink();
  let at = 0;
  try {
    for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
      if (cut > at) framer.push(bytes.subarray(at, cut), sink);
      at = Math.max(at, cut);
    }
  } catch (error) {
    return { sink, framer, error };
  }
  return { sink, framer };
}

function expectProtocolError(error: unknown): void {
  if (error === undefined) return;
  expect(error).toBeInstanceOf(ProtocolError);
}

describe('framer', () => {
  it('splits a valid stream the same way however it is chunked', () => {
    const whole = feed(validStream, []);
    expect(whole.error).toBeUndefined();
    expect(whole.sink.rows).toEqual([
      { a: '1', b: 'x' },
      { a: null, b: 'héllo' },
    ]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: validStream.length }), { maxLength: 40 }), (cuts) => {
        const { sink, error, framer } = feed(validStream, cuts);
        expect(error).toBeUndefined();
        expect(sink.types).toEqual(whole.sink.types);
        expect(sink.rows).toEqual(whole.sink.rows);
        expect(framer.buffered).toBe(0);
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('a truncated valid stream yields the complete messages before the cut and keeps the rest buffered', () => {
    const whole = feed(validStream, []);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: validStream.length - 1 }), fc.array(fc.integer({ min: 0, max: validStream.length }), { maxLength: 10 }), (cut, chunks) => {
        const { sink, error, framer } = feed(validStream.subarray(0, cut), chunks);
        expect(error).toBeUndefined();
        expect(sink.types).toEqual(whole.sink.types.slice(0, sink.types.length));
        expect(sink.types.length).toBeLessThan(whole.sink.types.length);
        expect(framer.buffered).toBeLessThanOrEqual(cut);
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('random bytes, random frames and corrupted streams end in ProtocolError or messages, never anything else', () => {
    const types = Object.values(Msg);
    const frame = fc.record({
      type: fc.oneof(fc.constantFrom(...types), fc.integer({ min: 0, max: 255 })),
      body: fc.uint8Array({ maxLength: 64 }),
      lengthDelta: fc.oneof(fc.constant(0), fc.integer({ min: -8, max: 8 })),
    });
    const framed = fc.array(frame, { maxLength: 12 }).map((frames) =>
      Buffer.concat(
        frames.map(({ type, body, lengthDelta }) => {
          const b = message(type, Buffer.from(body));
          b.writeUInt32BE(Math.max(0, body.length + 4 + lengthDelta), 1);
          return b;
        }),
      ),
    );
    const corrupted = fc.tuple(fc.integer({ min: 0, max: validStream.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
      const copy = Buffer.from(validStream);
      copy[at] = byte;
      return copy;
    });
    const bytes = fc.oneof(fc.uint8Array({ maxLength: 256 }).map((a) => Buffer.from(a)), framed, corrupted);
    fc.assert(
      fc.property(bytes, fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 8 }), (input, cuts) => {
        expectProtocolError(feed(input, cuts).error);
      }),
      { seed: 42, numRuns: 2_000 },
    );
  });

  it('error fields that run past their message are refused (pg-protocol alone would loop forever)', () => {
    for (const body of ['SERROR', 'SERROR\0C', 'S\0\0X', '']) {
      expect(feed(message(Msg.ErrorResponse, Buffer.from(body)), []).error).toBeInstanceOf(ProtocolError);
      expect(feed(message(Msg.NoticeResponse, Buffer.from(body)), []).error).toBeInstanceOf(ProtocolError);
    }
    expect(feed(Buffer.concat([dataRow(['only one']), ready]), []).error).toBeInstanceOf(ProtocolError);
    expect(feed(message(Msg.ReadyForQuery, Buffer.from('II')), []).error).toBeInstanceOf(ProtocolError);
  });

  it('skips a DataRow larger than MAX_ROW_BYTES without buffering it, then goes on', () => {
    const framer = new Framer();
    const sink = new RecordingSink();
    const header = Buffer.alloc(5);
    header[0] = Msg.DataRow;
    header.writeUInt32BE(MAX_ROW_BYTES + 4 + 10, 1);
    framer.push(header, sink);
    const chunk = Buffer.alloc(1024 * 1024);
    for (let sent = 0; sent < MAX_ROW_BYTES; sent += chunk.length) framer.push(chunk, sink);
    expect(framer.buffered).toBe(0);
    framer.push(Buffer.concat([Buffer.alloc(10), complete('SELECT 1'), ready]), sink);
    expect(sink.oversizedBytes).toBe(MAX_ROW_BYTES + 10);
    expect(sink.types).toEqual([Msg.CommandComplete, Msg.ReadyForQuery]);
    // Anything else that large is refused outright.
    const big = Buffer.alloc(5);
    big[0] = Msg.RowDescription;
    big.writeUInt32BE(MAX_ROW_BYTES + 100, 1);
    expect(() => new Framer().push(big, sink)).toThrow(ProtocolError);
  });
});

// ---- through a real socket ----------------------------------------------------------------------

/** A server that completes startup (or not), then answers each message with `garbage` and hangs up. */
async function garbageServer(garbage: Buffer, duringStartup: boolean): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    let started = false;
    socket.on('data', () => {
      if (!started && !duringStartup) {
        started = true;
        socket.write(Buffer.concat([authOk, keyData, paramStatus, ready]));
        return;
      }
      socket.end(garbage);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

describe('a server speaking garbage', () => {
  it('after startup: the statement fails with a typed error and the connection ends; never a crash or hang', async () => {
    const garbage = fc.sample(
      fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 200 }).map((a) => Buffer.from(a)),
        fc.tuple(fc.constantFrom(...Object.values(Msg)), fc.uint8Array({ maxLength: 40 })).map(([type, body]) => message(type, Buffer.from(body))),
      ),
      { seed: 42, numRuns: 25 },
    );
    const kinds: string[] = [];
    for (const bytes of garbage) {
      const { server, port, sockets } = await garbageServer(bytes, false);
      const system = testSystem();
      try {
        const conn = await connectPostgres(system, { host: '127.0.0.1', port, user: 'fuzz', connectTimeoutMs: 2_000 });
        const outcome = await conn.query('select 1', undefined, { timeoutMs: 2_000 }).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        kinds.push('error' in outcome ? `${(outcome.error as Error).name}:${((outcome.error as Error).cause as Error | undefined)?.name ?? ''}` : 'result');
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(DbError);
          const error = outcome.error as DbError;
          if (error instanceof ConnectionLost || error instanceof OutcomeUnknown) {
            if (error.cause !== undefined && error.cause instanceof Error) expect(error.cause).toBeInstanceOf(ProtocolError);
          }
        }
        await conn.close();
        await conn.ended;
        expect(conn.open).toBe(false);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
    // Most garbage is caught by the framer; some is a truncated message the server's hang-up ends.
    expect(kinds.filter((k) => k.includes('ProtocolError')).length).toBeGreaterThan(10);
  }, 60_000);

  it('during startup: connectPostgres rejects with ProtocolError or ConnectFailed', async () => {
    const garbage = [Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'), Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 42]), message(Msg.ErrorResponse, Buffer.from('Sbroken')), Buffer.from([0x45, 0xff, 0xff, 0xff, 0xff])];
    for (const bytes of garbage) {
      const { server, port, sockets } = await garbageServer(bytes, true);
      const system = testSystem();
      try {
        const error = await connectPostgres(system, { host: '127.0.0.1', port, user: 'fuzz', connectTimeoutMs: 2_000 }).then(
          () => new Error('connected to garbage'),
          (e: unknown) => e,
        );
        expect([ProtocolError, ConnectFailed].some((Class) => error instanceof Class), String(error)).toBe(true);
        expect((error as DbError).connection).toMatchObject({ host: '127.0.0.1', port, user: 'fuzz' });
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
  });
});

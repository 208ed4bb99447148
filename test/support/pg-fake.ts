/**
 * A scripted Postgres server for tests of what a real one never does: a real TCP server on
 * loopback that speaks the wire protocol's bytes, answering each client unit (a simple Query, or
 * the extended messages up to a Sync) as the test's script says, in or out of order.
 *
 *   const fake = await startFakePg({ unit: (session, unit) => session.write(answer(unit, [['1']])) });
 *   ... connect with { host: '127.0.0.1', port: fake.port, user: 'u', ssl: false } ...
 *   await fake.close();
 */
import { createServer, type Server, type Socket } from 'node:net';

/** What the client sent as one unit of work. */
export type ClientUnit =
  | { readonly kind: 'simple'; readonly sql: string }
  | { readonly kind: 'extended'; readonly sql: string; readonly messages: readonly ClientMessage[] };

export interface ClientMessage {
  readonly type: string;
  readonly body: Buffer;
}

export interface FakeSession {
  readonly socket: Socket;
  /** Units received so far (this one included). */
  readonly units: ClientUnit[];
  write(...messages: Buffer[]): void;
}

export interface FakePgScript {
  /** After the StartupMessage. Default: AuthenticationOk, BackendKeyData, ReadyForQuery('I'). */
  startup?(session: FakeSession): void;
  /** Every message after the StartupMessage (before units are formed): its type and body. */
  message?(session: FakeSession, type: string, body: Buffer): void;
  /** A unit of work after startup. */
  unit?(session: FakeSession, unit: ClientUnit, index: number): void;
}

export interface FakePg {
  readonly port: number;
  readonly sessions: FakeSession[];
  close(): Promise<void>;
}

// ---- backend messages ----

/** A backend message: type byte, length, body. */
export function backendMessage(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

export const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const cstring = (s: string): Buffer => Buffer.from(`${s}\0`, 'utf8');

export const be = {
  authOk: (): Buffer => backendMessage('R', int32(0)),
  authCleartext: (): Buffer => backendMessage('R', int32(3)),
  authSasl: (mechanisms = ['SCRAM-SHA-256']): Buffer => backendMessage('R', int32(10), ...mechanisms.map(cstring), Buffer.from([0])),
  authSaslContinue: (data: string): Buffer => backendMessage('R', int32(11), Buffer.from(data, 'utf8')),
  authSaslFinal: (data: string): Buffer => backendMessage('R', int32(12), Buffer.from(data, 'utf8')),
  backendKey: (pid = 4242, secret = 7): Buffer => backendMessage('K', int32(pid), int32(secret)),
  parameterStatus: (name: string, value: string): Buffer => backendMessage('S', cstring(name), cstring(value)),
  ready: (status: 'I' | 'T' | 'E' = 'I'): Buffer => backendMessage('Z', Buffer.from(status, 'latin1')),
  /** Text columns (type text). */
  rowDescription: (names: readonly string[]): Buffer =>
    backendMessage('T', int16(names.length), ...names.map((name) => Buffer.concat([cstring(name), int32(0), int16(0), int32(25), int16(-1), int32(-1), int16(0)]))),
  dataRow: (values: readonly (string | null)[]): Buffer =>
    backendMessage('D', int16(values.length), ...values.map((v) => (v === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(v)), Buffer.from(v, 'utf8')])))),
  commandComplete: (tag: string): Buffer => backendMessage('C', cstring(tag)),
  error: (code: string, text: string, severity = 'ERROR'): Buffer =>
    backendMessage('E', cstring(`S${severity}`), cstring(`V${severity}`), cstring(`C${code}`), cstring(`M${text}`), Buffer.from([0])),
  notice: (text: string): Buffer => backendMessage('N', cstring('SNOTICE'), cstring('VNOTICE'), cstring('C00000'), cstring(`M${text}`), Buffer.from([0])),
  parseComplete: (): Buffer => backendMessage('1'),
  bindComplete: (): Buffer => backendMessage('2'),
  noData: (): Buffer => backendMessage('n'),
  parameterDescription: (oids: readonly number[]): Buffer => backendMessage('t', int16(oids.length), ...oids.map(int32)),
};

/**
 * The ordinary answer to a unit, with `rows` of text values under `columns`: for the extended
 * protocol, one message per client message (ParseComplete, BindComplete, descriptions, rows,
 * CommandComplete), then ReadyForQuery. The parts before ReadyForQuery come back separately in
 * `body`, for scripts that reorder or drop them.
 */
export function answer(unit: ClientUnit, rows: readonly (readonly string[])[], columns: readonly string[] = ['v']): { body: Buffer[]; ready: Buffer; all: Buffer } {
  const body: Buffer[] = [];
  const result = (): void => {
    for (const row of rows) body.push(be.dataRow(row));
    body.push(be.commandComplete(`SELECT ${rows.length}`));
  };
  if (unit.kind === 'simple') {
    body.push(be.rowDescription(columns));
    result();
  } else {
    for (const m of unit.messages) {
      if (m.type === 'P') body.push(be.parseComplete());
      else if (m.type === 'B') body.push(be.bindComplete());
      else if (m.type === 'D') {
        if (m.body[0] === 0x53) body.push(be.parameterDescription([]));
        body.push(be.rowDescription(columns));
      } else if (m.type === 'E') result();
    }
  }
  const ready = be.ready();
  return { body, ready, all: Buffer.concat([...body, ready]) };
}

// ---- the server ----

export async function startFakePg(script: FakePgScript): Promise<FakePg> {
  const sessions: FakeSession[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: FakeSession = {
      socket,
      units: [],
      write: (...messages) => {
        if (!socket.destroyed) socket.write(Buffer.concat(messages));
      },
    };
    sessions.push(session);
    let buffered = Buffer.alloc(0);
    let started = false;
    let pending: ClientMessage[] = [];
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(length);
          if (code === 80877103) {
            session.write(Buffer.from('N'));
            continue;
          }
          started = true;
          if (script.startup !== undefined) script.startup(session);
          else session.write(be.authOk(), be.backendKey(), be.ready());
          continue;
        }
        if (buffered.length < 5) return;
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const type = String.fromCharCode(buffered[0]!);
        const body = Buffer.from(buffered.subarray(5, length + 1));
        buffered = buffered.subarray(length + 1);
        script.message?.(session, type, body);
        if (type === 'X') {
          socket.end();
          return;
        }
        if (type === 'p') continue;
        if (type === 'Q') {
          const unit: ClientUnit = { kind: 'simple', sql: body.toString('utf8', 0, body.length - 1) };
          session.units.push(unit);
          script.unit?.(session, unit, session.units.length - 1);
          continue;
        }
        pending.push({ type, body });
        if (type === 'S') {
          const parse = pending.find((m) => m.type === 'P');
          const sql = parse === undefined ? '' : parse.body.toString('utf8', parse.body.indexOf(0) + 1, parse.body.indexOf(0, parse.body.indexOf(0) + 1));
          const unit: ClientUnit = { kind: 'extended', sql, messages: pending };
          pending = [];
          session.units.push(unit);
          script.unit?.(session, unit, session.units.length - 1);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    sessions,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

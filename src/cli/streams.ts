/**
 * `molo streams ls|info|view` and `molo consumers info`: durable streams through a node's admin
 * surface (the read-only `/streams` endpoints, which call the public StreamStore API).
 */
import Table from 'cli-table3';
import { AdminBadResponse, CliUsageError } from '../admin/errors.js';
import type { StreamMessageView } from '../admin/stream-routes.js';
import type { ConsumerInfo, StreamInfo } from '../bus/index.js';
import { errorOf, getJson } from './client.js';
import { ExitCode, parseCommandLine, resolveTarget, TARGET_OPTIONS, type CliIo } from './run.js';

export const STREAMS_USAGE = `usage: molo streams <ls|info|view> | molo consumers info  [--url URL] [--json]

  streams ls                          every stream: messages, bytes, last sequence, consumers
  streams info STREAM                 one stream and its consumers (ack floor, next, pending, lag)
  streams view STREAM [--from SEQ] [--limit N]   messages (default the last 20, at most 100)
  consumers info STREAM CONSUMER      one consumer

environment: MOLO_ADMIN_URL, MOLO_ADMIN_TOKEN
exit codes: 0 ok, 1 error (unknown stream or consumer, node unreachable), 2 usage
`;

const plain = { head: [] as string[], border: [] as string[] };

/** `molo streams ...` (`group` streams) or `molo consumers ...`, with `argv` after the group. */
export async function runStreamsCli(group: 'streams' | 'consumers', argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  let target: ReturnType<typeof resolveTarget>;
  try {
    ({ values, positionals } = parseCommandLine(argv, { ...TARGET_OPTIONS, from: { type: 'string' }, limit: { type: 'string' } }));
    if (values.help === true || positionals[0] === 'help') {
      io.stdout(STREAMS_USAGE);
      return ExitCode.Ok;
    }
    target = resolveTarget(values.url as string | undefined, values.timeout as string | undefined, io.env);
  } catch (error) {
    io.stderr(`molo ${group}: ${error instanceof Error ? error.message : String(error)}\n\n${STREAMS_USAGE}`);
    return ExitCode.Usage;
  }
  const json = values.json === true;
  const get = async (path: string): Promise<unknown> => {
    const answer = await getJson(target.url, path, target.timeoutMs, target.token);
    if (answer.status === 200) return answer.body;
    const error = errorOf(answer.body);
    const hint = answer.status === 401 ? '; set MOLO_ADMIN_TOKEN to the node\'s admin.token' : '';
    throw new AdminBadResponse(new URL(path, target.url).toString(), answer.status, `${error === undefined ? 'no error body' : `${error.code}: ${error.message}`}${hint}`);
  };
  const print = (body: unknown, text: () => string): void => io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : text());
  const [command, ...args] = positionals;
  try {
    const key = `${group} ${command ?? ''}`;
    if (key === 'streams ls' && args.length === 0) {
      const body = (await get('/streams')) as { streams: StreamInfo[] };
      print(body, () => streamsTable(body.streams));
    } else if (key === 'streams info' && args.length === 1) {
      const body = (await get(`/streams/${encodeURIComponent(args[0]!)}`)) as { stream: StreamInfo; consumers: ConsumerInfo[] };
      print(body, () => `${streamsTable([body.stream])}${body.consumers.length === 0 ? 'no consumers\n' : consumersTable(body.consumers)}`);
    } else if (key === 'streams view' && args.length === 1) {
      const query = new URLSearchParams();
      if (typeof values.from === 'string') query.set('from', values.from);
      if (typeof values.limit === 'string') query.set('limit', values.limit);
      const text = query.toString();
      const body = (await get(`/streams/${encodeURIComponent(args[0]!)}/messages${text === '' ? '' : `?${text}`}`)) as { messages: StreamMessageView[] };
      print(body, () => body.messages.map(messageLine).join('') || 'no messages\n');
    } else if (key === 'consumers info' && args.length === 2) {
      const body = (await get(`/streams/${encodeURIComponent(args[0]!)}/consumers/${encodeURIComponent(args[1]!)}`)) as ConsumerInfo;
      print(body, () => consumersTable([body]));
    } else {
      throw new CliUsageError(`expected one of: streams ls | streams info STREAM | streams view STREAM | consumers info STREAM CONSUMER`);
    }
    return ExitCode.Ok;
  } catch (error) {
    const usage = error instanceof CliUsageError;
    const code = (error as { code?: unknown }).code;
    io.stderr(`molo ${group}: ${typeof code === 'string' && !usage ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n${usage ? `\n${STREAMS_USAGE}` : ''}`);
    return usage ? ExitCode.Usage : ExitCode.Failed;
  }
}

function streamsTable(streams: readonly StreamInfo[]): string {
  if (streams.length === 0) return 'no streams\n';
  const table = new Table({ head: ['STREAM', 'MESSAGES', 'BYTES', 'LAST SEQ', 'CONSUMERS'], style: plain });
  for (const s of streams) table.push([s.name, s.messages, s.bytes, s.lastSeq, s.consumers]);
  return `${table.toString()}\n`;
}

function consumersTable(consumers: readonly ConsumerInfo[]): string {
  const table = new Table({ head: ['STREAM', 'CONSUMER', 'ACK FLOOR', 'NEXT SEQ', 'PENDING', 'LAG'], style: plain });
  for (const c of consumers) table.push([c.stream, c.name, c.ackFloor, c.nextSeq, c.pending, c.lag]);
  return `${table.toString()}\n`;
}

function messageLine(message: StreamMessageView): string {
  const shown = message.value !== undefined ? JSON.stringify(message.value) : message.text !== undefined ? JSON.stringify(message.text) : `base64:${message.base64}`;
  return `${message.seq}  ${new Date(message.time).toISOString()}  ${message.encoding} ${message.bytes} B  ${shown}${message.truncated ? ' …' : ''}\n`;
}

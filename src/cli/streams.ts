/**
 * `molo streams ls|info|view|purge` and `molo consumers info|reset`: durable streams through a
 * node's admin surface (the `/streams` endpoints, which call the public StreamStore API). The
 * writes (purge, reset) need MOLO_ADMIN_TOKEN.
 */
import Table from 'cli-table3';
import { AdminBadResponse, CliUsageError } from '../admin/errors.js';
import type { StreamMessageView } from '../admin/stream-routes.js';
import type { ConsumerInfo, StreamInfo } from '../bus/index.js';
import { authHint, errorOf, getJson, postJson, type AdminAnswer } from './client.js';
import { startProgress } from './progress.js';
import { ExitCode, parseCommandLine, resolveTarget, TARGET_OPTIONS, type CliIo } from './run.js';

export const STREAMS_USAGE = `usage: molo streams <ls|info|view|purge> | molo consumers <info|reset>  [--url URL] [--json]

  streams ls                          every stream: messages, bytes, last sequence, consumers
  streams info STREAM                 one stream and its consumers (ack floor, next, pending, lag)
  streams view STREAM [--from SEQ] [--limit N]   messages (default the last 20, at most 100)
  streams purge STREAM [--before-seq SEQ | --keep N | --older-than MS] [--batch N]
                                      deletes messages (all without a flag), --batch (10000) sequences
                                      per request, with progress on stderr; consumers keep their cursors
  consumers info STREAM CONSUMER      one consumer
  consumers reset STREAM CONSUMER (--seq SEQ | --time ISO|MS | --first | --new)
                                      moves its cursor there and drops its pending deliveries

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
    ({ values, positionals } = parseCommandLine(argv, {
      ...TARGET_OPTIONS,
      from: { type: 'string' },
      limit: { type: 'string' },
      'before-seq': { type: 'string' },
      keep: { type: 'string' },
      'older-than': { type: 'string' },
      batch: { type: 'string' },
      seq: { type: 'string' },
      time: { type: 'string' },
      first: { type: 'boolean' },
      new: { type: 'boolean' },
    }));
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
  const checked = (path: string, answer: AdminAnswer): unknown => {
    if (answer.status === 200) return answer.body;
    const error = errorOf(answer.body);
    const hint = authHint(answer.status, target.token);
    throw new AdminBadResponse(new URL(path, target.url).toString(), answer.status, `${error === undefined ? 'no error body' : `${error.code}: ${error.message}`}${hint}`);
  };
  const get = async (path: string): Promise<unknown> => checked(path, await getJson(target.url, path, target.timeoutMs, target.token));
  const post = async (path: string, body: unknown): Promise<unknown> => checked(path, await postJson(target.url, path, body, target.timeoutMs, target.token));
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
    } else if (key === 'streams purge' && args.length === 1) {
      const body = await purge(args[0]!, values, get, post, io);
      print(body, () => `${body.purged} message${body.purged === 1 ? '' : 's'} purged from ${body.stream}\n`);
    } else if (key === 'consumers reset' && args.length === 2) {
      const path = `/streams/${encodeURIComponent(args[0]!)}/consumers/${encodeURIComponent(args[1]!)}/seek`;
      const body = (await post(path, seekBody(values))) as { stream: string; consumer: string; nextSeq: number };
      print(body, () => `${body.stream}/${body.consumer}: next sequence ${body.nextSeq}\n`);
    } else if (key === 'consumers info' && args.length === 2) {
      const body = (await get(`/streams/${encodeURIComponent(args[0]!)}/consumers/${encodeURIComponent(args[1]!)}`)) as ConsumerInfo;
      print(body, () => consumersTable([body]));
    } else {
      throw new CliUsageError(`expected one of: streams ls | streams info STREAM | streams view STREAM | streams purge STREAM | consumers info STREAM CONSUMER | consumers reset STREAM CONSUMER`);
    }
    return ExitCode.Ok;
  } catch (error) {
    const usage = error instanceof CliUsageError;
    const code = (error as { code?: unknown }).code;
    io.stderr(`molo ${group}: ${typeof code === 'string' && !usage ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n${usage ? `\n${STREAMS_USAGE}` : ''}`);
    return usage ? ExitCode.Usage : ExitCode.Failed;
  }
}

type Values = Record<string, string | boolean | undefined>;

const DEFAULT_PURGE_BATCH = 10_000;

/**
 * A purge in steps of `--batch` sequences (each a `beforeSeq` purge, so each request holds the
 * store briefly and the bar moves); `--older-than` is by time and goes in one request.
 */
async function purge(stream: string, values: Values, get: (path: string) => Promise<unknown>, post: (path: string, body: unknown) => Promise<unknown>, io: CliIo): Promise<{ stream: string; purged: number }> {
  const given = ['before-seq', 'keep', 'older-than'].filter((flag) => values[flag] !== undefined);
  if (given.length > 1) throw new CliUsageError(`give at most one of --before-seq, --keep, --older-than, got --${given.join(' and --')}`);
  const batch = values.batch === undefined ? DEFAULT_PURGE_BATCH : wholeFlag('--batch', values.batch, 1);
  const path = `/streams/${encodeURIComponent(stream)}/purge`;
  if (values['older-than'] !== undefined) return (await post(path, { olderThanMs: wholeFlag('--older-than', values['older-than'], 0) })) as { stream: string; purged: number };
  const { stream: info } = (await get(`/streams/${encodeURIComponent(stream)}`)) as { stream: StreamInfo };
  // The first retained sequence, as if none were missing: a gap only makes the first step larger.
  const first = info.lastSeq - info.messages + 1;
  let end = info.lastSeq + 1;
  if (values['before-seq'] !== undefined) end = Math.min(end, wholeFlag('--before-seq', values['before-seq'], 1));
  if (values.keep !== undefined) end = Math.min(end, info.lastSeq - wholeFlag('--keep', values.keep, 0) + 1);
  const total = Math.max(0, Math.min(info.messages, end - first));
  const progress = startProgress(io, 'purged', total);
  let purged = 0;
  try {
    for (let cursor = first; ; ) {
      cursor = Math.min(cursor + batch, end);
      // A first step below 1 purges nothing: start no lower than sequence 1.
      const body = (await post(path, { beforeSeq: Math.max(1, cursor) })) as { purged: number };
      purged += body.purged;
      progress.update(Math.min(purged, total));
      if (cursor >= end) break;
    }
  } finally {
    progress.stop();
  }
  return { stream, purged };
}

function seekBody(values: Values): unknown {
  const given = ['seq', 'time', 'first', 'new'].filter((flag) => values[flag] !== undefined);
  if (given.length !== 1) throw new CliUsageError(`consumers reset takes exactly one of --seq, --time, --first, --new${given.length > 1 ? `, got --${given.join(' and --')}` : ''}`);
  if (values.seq !== undefined) return { seq: wholeFlag('--seq', values.seq, 1) };
  if (values.first === true) return { to: 'first' };
  if (values.new === true) return { to: 'new' };
  const time = values.time as string;
  // A number is ms since the epoch; anything else must be an ISO 8601 date.
  const ms = /^\d+$/.test(time) ? Number(time) : Date.parse(time);
  if (!Number.isFinite(ms)) throw new CliUsageError(`--time must be an ISO 8601 date or ms since the epoch, got ${time}`);
  return { time: ms };
}

function wholeFlag(flag: string, value: string | boolean | undefined, min: number): number {
  const number = Number(value);
  if (typeof value !== 'string' || !Number.isSafeInteger(number) || number < min) throw new CliUsageError(`${flag} must be an integer of at least ${min}, got ${String(value)}`);
  return number;
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

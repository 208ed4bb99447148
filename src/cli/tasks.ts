/**
 * `molo tasks ...`: the task queue through a node's admin surface (the `/tasks` endpoints, which
 * call the public TaskQueue API). Mutating commands need the node's token in MOLO_ADMIN_TOKEN.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { AdminBadResponse, CliUsageError } from '../admin/errors.js';
import { authHint, errorOf, getJson, postJson, type AdminAnswer } from './client.js';
import { ExitCode, parseCommandLine, resolveTarget, TARGET_OPTIONS, type CliIo } from './run.js';
import { startProgress } from './progress.js';
import { formatDeadLetters, formatQueues, formatTask, formatTaskLine } from './tasks-format.js';

export const TASKS_USAGE = `usage: molo tasks <command> [--url URL] [--json] [--timeout MS]

commands:
  list [QUEUE] [--state S] [--limit N] [--after ID]   queues with their counts, or a queue's tasks
  status ID                                          one line: queue, name, state, attempts
  inspect ID                                         the task's envelope and history
  enqueue QUEUE NAME [--payload JSON] [--priority N] [--run-at TIME] [--max-retries N] [--idempotency-key K]
  enqueue QUEUE --file tasks.jsonl [--batch N] [--priority N]
                                                     one task per line ({"name", "payload", ...}); progress on stderr
  retry ID                                           a failed task runs now; a dead-lettered one is queued again
  cancel ID                                          a queued or running task is cancelled
  dlq QUEUE [--limit N] [--after ID]                 the queue's dead letters
  redrive QUEUE [ID...]                              dead letters back to queued (all, or those ids)
  pause QUEUE | resume QUEUE                         stop or restart every pool taking the queue's tasks
  purge QUEUE [--dead-letters]                       delete the waiting tasks (and the dead letters)
  delete-queue QUEUE [--force]                       delete the queue and its tasks (--force: with tasks in flight)

environment: MOLO_ADMIN_URL, MOLO_ADMIN_TOKEN (required by every command that changes something)
exit codes: 0 ok, 1 error (unknown task or queue, refused, node unreachable), 2 usage
`;

/** Lines of a --file at most, and bytes of one line. */
const MAX_FILE_TASKS = 1_000_000;
const MAX_LINE_BYTES = 2 * 1024 * 1024;
const DEFAULT_FILE_BATCH = 100;

type Values = Record<string, string | boolean | undefined>;

/** Runs `molo tasks` with `argv` (after `tasks`); resolves with the exit code. */
export async function runTasksCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let parsed: { values: Values; positionals: string[] };
  let target: ReturnType<typeof resolveTarget>;
  try {
    parsed = parse(argv);
    if (parsed.values.help === true || parsed.positionals[0] === 'help') {
      io.stdout(TASKS_USAGE);
      return ExitCode.Ok;
    }
    target = resolveTarget(parsed.values.url as string | undefined, parsed.values.timeout as string | undefined, io.env);
  } catch (error) {
    io.stderr(`molo tasks: ${error instanceof Error ? error.message : String(error)}\n\n${TASKS_USAGE}`);
    return ExitCode.Usage;
  }
  const [command, ...args] = parsed.positionals;
  try {
    return await execute(command, args, parsed.values, target, io);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const usage = error instanceof CliUsageError;
    io.stderr(`molo tasks: ${typeof code === 'string' && !usage ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n${usage ? `\n${TASKS_USAGE}` : ''}`);
    return usage ? ExitCode.Usage : ExitCode.Failed;
  }
}

function parse(argv: readonly string[]): { values: Values; positionals: string[] } {
  return parseCommandLine(argv, {
    ...TARGET_OPTIONS,
    state: { type: 'string' },
    limit: { type: 'string' },
    after: { type: 'string' },
    payload: { type: 'string' },
    priority: { type: 'string' },
    'run-at': { type: 'string' },
    'max-retries': { type: 'string' },
    'idempotency-key': { type: 'string' },
    file: { type: 'string' },
    batch: { type: 'string' },
    'dead-letters': { type: 'boolean' },
    force: { type: 'boolean' },
  });
}

interface Target {
  readonly url: string;
  readonly timeoutMs: number;
  readonly token?: string;
}

async function execute(command: string | undefined, args: string[], values: Values, target: Target, io: CliIo): Promise<ExitCode> {
  const json = values.json === true;
  const print = (body: unknown, text: () => string): void => io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : text());
  switch (command) {
    case 'list': {
      arity(args, 0, 1, 'list [QUEUE]');
      if (args.length === 0) {
        const body = (await ask(target, 'GET', '/tasks/queues')) as { queues: unknown[] };
        print(body, () => formatQueues(body.queues as never));
        return ExitCode.Ok;
      }
      const body = (await ask(target, 'GET', `${queuePath(args[0]!)}/tasks${query(values, ['state', 'limit', 'after'])}`)) as { tasks: unknown[] };
      print(body, () => body.tasks.map((task) => formatTaskLine(task as never)).join('') || 'no tasks\n');
      return ExitCode.Ok;
    }
    case 'status':
    case 'inspect': {
      arity(args, 1, 1, `${command} ID`);
      const body = await ask(target, 'GET', `/tasks/${encodeURIComponent(args[0]!)}`);
      print(body, () => (command === 'status' ? formatTaskLine(body as never) : formatTask(body as never)));
      return ExitCode.Ok;
    }
    case 'retry':
    case 'cancel': {
      arity(args, 1, 1, `${command} ID`);
      const body = (await ask(target, 'POST', `/tasks/${encodeURIComponent(args[0]!)}/${command}`, {})) as { id: string; state: string };
      print(body, () => `${body.id}  ${body.state}\n`);
      return ExitCode.Ok;
    }
    case 'dlq': {
      arity(args, 1, 1, 'dlq QUEUE');
      const body = (await ask(target, 'GET', `${queuePath(args[0]!)}/dlq${query(values, ['limit', 'after'])}`)) as { deadLetters: unknown[] };
      print(body, () => formatDeadLetters(body.deadLetters as never));
      return ExitCode.Ok;
    }
    case 'redrive': {
      arity(args, 1, Number.POSITIVE_INFINITY, 'redrive QUEUE [ID...]');
      const body = (await ask(target, 'POST', `${queuePath(args[0]!)}/redrive`, args.length > 1 ? { ids: args.slice(1) } : {})) as { redriven: number };
      print(body, () => `${body.redriven} redriven\n`);
      return ExitCode.Ok;
    }
    case 'pause':
    case 'resume': {
      arity(args, 1, 1, `${command} QUEUE`);
      const body = (await ask(target, 'POST', `${queuePath(args[0]!)}/${command}`, {})) as { changed: boolean };
      print(body, () => `${args[0]}  ${command === 'pause' ? 'paused' : 'resumed'}${body.changed ? '' : ' (already)'}\n`);
      return ExitCode.Ok;
    }
    case 'purge': {
      arity(args, 1, 1, 'purge QUEUE');
      const body = (await ask(target, 'POST', `${queuePath(args[0]!)}/purge`, values['dead-letters'] === true ? { deadLetters: true } : {})) as { purged: number };
      print(body, () => `${body.purged} purged\n`);
      return ExitCode.Ok;
    }
    case 'delete-queue': {
      arity(args, 1, 1, 'delete-queue QUEUE');
      const body = (await ask(target, 'POST', `${queuePath(args[0]!)}/delete`, values.force === true ? { force: true } : {})) as { deleted: number };
      print(body, () => `${args[0]} deleted (${body.deleted} tasks)\n`);
      return ExitCode.Ok;
    }
    case 'enqueue':
      return values.file === undefined ? enqueueOne(args, values, target, print) : enqueueFile(args, values, target, io);
    case undefined:
      throw new CliUsageError('no tasks command given');
    default:
      throw new CliUsageError(`unknown tasks command '${command}'`);
  }
}

async function enqueueOne(args: string[], values: Values, target: Target, print: (body: unknown, text: () => string) => void): Promise<ExitCode> {
  arity(args, 2, 2, 'enqueue QUEUE NAME');
  const task: Record<string, unknown> = { name: args[1] };
  if (values.payload !== undefined) task.payload = jsonFlag('--payload', values.payload as string);
  if (values['run-at'] !== undefined) task.runAt = values['run-at'];
  if (values['max-retries'] !== undefined) task.maxRetries = integerFlag('--max-retries', values['max-retries'] as string);
  if (values['idempotency-key'] !== undefined) task.idempotencyKey = values['idempotency-key'];
  const body = (await ask(target, 'POST', `${queuePath(args[0]!)}/enqueue`, { task, ...priority(values) })) as { id: string; duplicate: boolean };
  print(body, () => `${body.id}${body.duplicate ? '  (duplicate: already enqueued within 24 h)' : ''}\n`);
  return ExitCode.Ok;
}

/** Streams a JSON-lines file in batches, printing progress on stderr; checks every line before sending any. */
async function enqueueFile(args: string[], values: Values, target: Target, io: CliIo): Promise<ExitCode> {
  arity(args, 1, 1, 'enqueue QUEUE --file FILE');
  const file = values.file as string;
  const batch = values.batch === undefined ? DEFAULT_FILE_BATCH : integerFlag('--batch', values.batch as string);
  if (batch < 1 || batch > 1_000) throw new CliUsageError('--batch must be in 1..1000');
  try {
    await stat(file);
  } catch (error) {
    throw new CliUsageError(`cannot read --file ${file}: ${(error as Error).message}`);
  }
  let total = 0;
  for await (const _task of tasksOf(file)) total++;
  if (total === 0) throw new CliUsageError(`--file ${file} holds no tasks`);
  const path = `${queuePath(args[0]!)}/enqueue`;
  let sent = 0;
  let duplicates = 0;
  let pending: unknown[] = [];
  const progress = startProgress(io, 'enqueued', total);
  const flush = async (): Promise<void> => {
    const body = (await ask(target, 'POST', path, { tasks: pending, ...priority(values) })) as { results: { duplicate: boolean }[] };
    sent += pending.length;
    duplicates += body.results.filter((result) => result.duplicate).length;
    pending = [];
    progress.update(sent, duplicates > 0 ? `(${duplicates} duplicates)` : undefined);
  };
  try {
    for await (const task of tasksOf(file)) {
      pending.push(task);
      if (pending.length >= batch) await flush();
    }
    if (pending.length > 0) await flush();
  } finally {
    progress.stop();
  }
  io.stdout(values.json === true ? `${JSON.stringify({ enqueued: sent, duplicates })}\n` : `${sent} tasks enqueued (${duplicates} duplicates)\n`);
  return ExitCode.Ok;
}

async function* tasksOf(file: string): AsyncGenerator<unknown> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  let count = 0;
  for await (const line of lines) {
    number++;
    if (line.trim() === '') continue;
    if (line.length > MAX_LINE_BYTES) throw new CliUsageError(`${file}:${number}: line over ${MAX_LINE_BYTES} bytes`);
    let task: unknown;
    try {
      task = JSON.parse(line);
    } catch {
      throw new CliUsageError(`${file}:${number}: not JSON`);
    }
    if (task === null || typeof task !== 'object' || Array.isArray(task) || typeof (task as { name?: unknown }).name !== 'string') {
      throw new CliUsageError(`${file}:${number}: must be an object with a string "name"`);
    }
    if (++count > MAX_FILE_TASKS) throw new CliUsageError(`${file}: more than ${MAX_FILE_TASKS} tasks`);
    yield task;
  }
}

/** Asks the node; any answer but 2xx becomes AdminBadResponse naming the error code the node gave. */
async function ask(target: Target, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const answer: AdminAnswer = method === 'GET' ? await getJson(target.url, path, target.timeoutMs, target.token) : await postJson(target.url, path, body, target.timeoutMs, target.token);
  if (answer.status < 200 || answer.status > 299) {
    const error = errorOf(answer.body);
    throw new AdminBadResponse(new URL(path, target.url).toString(), answer.status, `${error === undefined ? 'no error body' : `${error.code}: ${error.message}`}${authHint(answer.status, target.token)}`);
  }
  return answer.body;
}

function queuePath(queue: string): string {
  return `/tasks/queues/${encodeURIComponent(queue)}`;
}

function query(values: Values, names: readonly string[]): string {
  const params = new URLSearchParams();
  for (const name of names) if (typeof values[name] === 'string') params.set(name, values[name] as string);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function priority(values: Values): { priority?: number } {
  return values.priority === undefined ? {} : { priority: integerFlag('--priority', values.priority as string) };
}

function arity(args: readonly string[], min: number, max: number, shape: string): void {
  if (args.length < min || args.length > max) throw new CliUsageError(`expected: molo tasks ${shape}`);
}

function integerFlag(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value)) throw new CliUsageError(`${flag} must be an integer, got ${text}`);
  return value;
}

function jsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliUsageError(`${flag} is not JSON: ${text.slice(0, 80)}`);
  }
}

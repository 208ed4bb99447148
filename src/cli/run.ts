import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { HealthReport } from '../admin/admin-actor.js';
import { AdminBadResponse, CliUsageError } from '../admin/errors.js';
import type { ProcessSnapshot } from '../admin/process-snapshot.js';
import type { TreeSnapshot } from '../admin/tree-snapshot.js';
import { authHint, errorOf, getJson } from './client.js';
import { formatHealth, formatProcesses, formatTree } from '../admin/format/snapshots.js';
import { formatNodes, isNodesReport, treePath } from './nodes.js';
import type { NodesReport } from '../admin/nodes-view.js';
import { applyPsView, psView, watchInterval, type PsView } from './ps.js';

/** Exit codes of `molo`. */
export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Where `molo` finds the node when neither --url nor MOLO_ADMIN_URL says: the admin surface's default address. */
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9710';
const DEFAULT_TIMEOUT_MS = 20_000;

export const USAGE = `usage: molo <command> [--url URL] [--json] [--timeout MS]

commands:
  tree      the live supervision tree: states, restart counts, intensity, mailboxes
            (--node NAME: another cluster node's, read through its admin actor)
  nodes     the cluster: each node's name, state, round-trip time, queued bytes
  ps        every live process (--sort mailbox|handled|memory|…, --filter TEXT,
            --watch: again every --interval MS (2000) until interrupted, or --count N times)
  health    ok, or why not (exit code 1 unless ok)
  migrate   status | up | new <name>: SQL migrations (see \`molo migrate --help\`)
  tasks     list | status | inspect | enqueue | retry | cancel | dlq | redrive | pause | resume | purge |
            delete-queue: the task queue (see \`molo tasks --help\`)
  streams   ls | info | view | purge: durable streams (see \`molo streams --help\`)
  consumers info | reset STREAM CONSUMER: a stream's durable consumer (its cursor, pending, lag)
  sup       restart | terminate PATH: a supervisor's child; scale PATH N: a simple_one_for_one
            group's children or a task pool's concurrency (see \`molo sup --help\`)
  programs  status | start | stop | restart | logs: supervised OS programs (see \`molo programs --help\`)
  help      this text

options:
  --url URL      the node's admin surface (default: $MOLO_ADMIN_URL, else ${DEFAULT_ADMIN_URL})
  --json         print the endpoint's raw JSON (every command that reads takes it)
  --timeout MS   how long to wait for the node (default ${DEFAULT_TIMEOUT_MS})
  --version      print molo's version

environment: MOLO_ADMIN_URL, MOLO_ADMIN_TOKEN (sent as a bearer token; required by a node bound off loopback)

exit codes: 0 ok, 1 node unreachable or not healthy or error, 2 usage
`;

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (`molo ps --watch` then redraws in place). */
  readonly isTTY?: boolean;
  /** stderr when it is a terminal: long work draws a progress bar there (plain lines otherwise). */
  readonly progressStream?: NodeJS.WriteStream;
}

interface Invocation {
  readonly command: 'tree' | 'ps' | 'health' | 'help' | 'nodes';
  readonly url: string;
  readonly json: boolean;
  readonly timeoutMs: number;
  /** The admin token, from MOLO_ADMIN_TOKEN. */
  readonly token?: string;
  /** `tree --node NAME`: another cluster node's tree. */
  readonly node?: string;
  /** `ps --sort/--filter`, and `--watch`. */
  readonly view?: PsView;
  readonly watch?: { readonly everyMs: number; readonly count: number };
}

/** Runs `molo` with `argv` (without node and script); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv, io.env);
  } catch (error) {
    io.stderr(`molo: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return ExitCode.Usage;
  }
  if (invocation.command === 'help') {
    io.stdout(USAGE);
    return ExitCode.Ok;
  }
  try {
    return await execute(invocation, io);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    io.stderr(`molo: ${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.Failed;
  }
}

/** The options every command that asks a node takes. */
export const TARGET_OPTIONS = {
  url: { type: 'string' },
  json: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Every command's `parseArgs`: strict, with positionals; what it refuses becomes the command's usage error. */
export function parseCommandLine<const Options extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: Options,
  usage: (detail: string) => Error = (detail) => new CliUsageError(detail),
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: Options }>> {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    throw usage(error instanceof Error ? error.message : String(error));
  }
}

function parseInvocation(argv: readonly string[], env: CliIo['env']): Invocation {
  const { values, positionals } = parseCommandLine(argv, { ...TARGET_OPTIONS, node: { type: 'string' }, sort: { type: 'string' }, filter: { type: 'string' }, watch: { type: 'boolean' }, interval: { type: 'string' }, count: { type: 'string' } });
  if (values.help === true) return { command: 'help', url: DEFAULT_ADMIN_URL, json: false, timeoutMs: DEFAULT_TIMEOUT_MS };
  if (positionals.length === 0) throw new CliUsageError('no command given');
  if (positionals.length > 1) throw new CliUsageError(`one command at a time, got: ${positionals.join(' ')}`);
  const command = positionals[0]!;
  if (command !== 'tree' && command !== 'ps' && command !== 'health' && command !== 'help' && command !== 'nodes') {
    throw new CliUsageError(`unknown command '${command}'`);
  }
  if (values.node !== undefined && command !== 'tree') throw new CliUsageError('--node goes with tree');
  const psFlags = values.sort !== undefined || values.filter !== undefined || values.watch !== undefined || values.interval !== undefined || values.count !== undefined;
  if (psFlags && command !== 'ps') throw new CliUsageError('--sort, --filter, --watch, --interval and --count go with ps');
  const ps = command === 'ps' ? { view: psView(values.sort, values.filter), watch: watchInterval(values.watch, values.interval, values.count) } : {};
  return { command, json: values.json === true, node: values.node, ...ps, ...resolveTarget(values.url, values.timeout, env) };
}

/** The node to ask: `--url`, else MOLO_ADMIN_URL, else the default; `--timeout`; the token from MOLO_ADMIN_TOKEN. */
export function resolveTarget(flagUrl: string | undefined, flagTimeout: string | undefined, env: CliIo['env']): { url: string; timeoutMs: number; token?: string } {
  const fromEnv = env['MOLO_ADMIN_URL'];
  const url = flagUrl ?? (fromEnv === undefined || fromEnv === '' ? DEFAULT_ADMIN_URL : fromEnv);
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new CliUsageError(`--url is not a URL: ${url}`);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') throw new CliUsageError(`--url must be http(s), got ${url}`);
  const timeoutMs = flagTimeout === undefined ? DEFAULT_TIMEOUT_MS : Number(flagTimeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new CliUsageError(`--timeout must be an integer in 1..600000 ms, got ${flagTimeout}`);
  }
  return { url: parsedUrl.toString(), timeoutMs, token: env['MOLO_ADMIN_TOKEN'] };
}

async function execute(invocation: Invocation, io: CliIo): Promise<ExitCode> {
  const { command, url, json, timeoutMs, token, node } = invocation;
  switch (command) {
    case 'tree': {
      const body = await expectOk(url, treePath(node), timeoutMs, token, (value) => isObject(value) && 'root' in value && 'sections' in value);
      io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : formatTree(body as TreeSnapshot));
      return ExitCode.Ok;
    }
    case 'ps': {
      const view = invocation.view ?? { sort: undefined, filter: undefined };
      const watch = invocation.watch;
      for (let round = 1; ; round++) {
        const body = await expectOk(url, '/processes', timeoutMs, token, (value) => isObject(value) && Array.isArray((value as { processes?: unknown }).processes));
        const shown = applyPsView(body as ProcessSnapshot, view);
        // In a terminal, each round replaces the last; piped, rounds follow one another.
        if (watch !== undefined && round > 1 && io.isTTY === true) io.stdout('\x1b[H\x1b[2J');
        io.stdout(json ? `${JSON.stringify(shown, null, watch === undefined ? 2 : 0)}\n` : formatProcesses(shown));
        if (!json && view.filter !== undefined) io.stdout(`${shown.processes.length} shown (filter '${view.filter}')\n`);
        if (watch === undefined || round >= watch.count) return ExitCode.Ok;
        await new Promise((resolve) => setTimeout(resolve, watch.everyMs));
      }
    }
    case 'health': {
      const answer = await getJson(url, '/health', timeoutMs, token);
      const body = answer.body;
      if (!isObject(body) || typeof (body as { status?: unknown }).status !== 'string') {
        const error = errorOf(body);
        throw new AdminBadResponse(new URL('/health', url).toString(), answer.status, `${error === undefined ? 'no status field' : `${error.code}: ${error.message}`}${authHint(answer.status, token)}`);
      }
      if (json) io.stdout(`${JSON.stringify(body, null, 2)}\n`);
      else if ('node' in body) io.stdout(formatHealth(body as HealthReport));
      else io.stdout(`${(body as { status: string }).status}  ${errorOf(body)?.message ?? ''}${authHint(answer.status, token)}\n`);
      return answer.status === 200 ? ExitCode.Ok : ExitCode.Failed;
    }
    case 'nodes': {
      const body = await expectOk(url, '/nodes', timeoutMs, token, isNodesReport);
      io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : formatNodes(body as NodesReport));
      return ExitCode.Ok;
    }
    case 'help':
      io.stdout(USAGE);
      return ExitCode.Ok;
    default: {
      const unknown: never = command;
      throw new CliUsageError(`unknown command ${String(unknown)}`);
    }
  }
}

export async function expectOk(url: string, path: string, timeoutMs: number, token: string | undefined, valid: (body: unknown) => boolean): Promise<unknown> {
  const answer = await getJson(url, path, timeoutMs, token);
  const endpoint = new URL(path, url).toString();
  if (answer.status !== 200) {
    const error = errorOf(answer.body);
    throw new AdminBadResponse(endpoint, answer.status, `${error === undefined ? 'no error body' : `${error.code}: ${error.message}`}${authHint(answer.status, token)}`);
  }
  if (!valid(answer.body)) throw new AdminBadResponse(endpoint, answer.status, 'not the shape this endpoint answers');
  return answer.body;
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

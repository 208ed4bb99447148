/**
 * `molo sup ...` and `molo programs ...`: supervisor children and OS programs through a node's
 * observer actions (`/actions/...`, which call the public Supervisor and ProgramSupervisor APIs).
 * Targets are tree paths, as `molo tree` prints them. Actions need MOLO_ADMIN_TOKEN.
 */
import Table from 'cli-table3';
import { AdminBadResponse, CliUsageError } from '../admin/errors.js';
import type { TreeSnapshot } from '../admin/tree-snapshot.js';
import type { ProgramLogs, ProgramSupervisorStatus } from '../behaviours/index.js';
import { authHint, errorOf, getJson, postJson, type AdminAnswer } from './client.js';
import { treePath } from './nodes.js';
import { ExitCode, parseCommandLine, resolveTarget, TARGET_OPTIONS, type CliIo } from './run.js';

export const SUP_USAGE = `usage: molo sup <restart|terminate|scale> PATH [--node NAME] [--url URL] [--json]

  restart PATH     restart the child at PATH (root/web/db): stopped first if it runs
  terminate PATH   stop the child at PATH (its supervisor keeps its spec)
  scale PATH N [--args JSON]
                   a simple_one_for_one group to N children: more are started from its
                   template with --args (a JSON array, default []), or the newest terminated;
                   a task pool (PATH its supervisor, fetcher or workers) to N tasks at once,
                   1 up to the concurrency it started with

environment: MOLO_ADMIN_URL, MOLO_ADMIN_TOKEN (required)
exit codes: 0 done, 1 refused or unreachable, 2 usage
`;

export const PROGRAMS_USAGE = `usage: molo programs <command> [--node NAME] [--url URL] [--json]

  status                        every supervised OS program: state, pid, restart budget, health
  start|stop|restart PATH NAME  act on program NAME of the program supervisor at PATH (root/programs)
  logs PATH NAME [--lines N]    its last output lines (stdout and stderr, across restarts; default
                                100, at most 1000), as the program supervisor keeps them

environment: MOLO_ADMIN_URL, MOLO_ADMIN_TOKEN (required by start, stop, restart)
exit codes: 0 done, 1 refused or unreachable, 2 usage
`;

interface Target {
  readonly url: string;
  readonly timeoutMs: number;
  readonly token?: string;
}

/** `molo sup` (`group` 'sup') or `molo programs` (`group` 'programs') with `argv` after the group. */
export async function runOpsCli(group: 'sup' | 'programs', argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const usage = group === 'sup' ? SUP_USAGE : PROGRAMS_USAGE;
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  let target: Target;
  try {
    ({ values, positionals } = parseCommandLine(argv, { ...TARGET_OPTIONS, node: { type: 'string' }, args: { type: 'string' }, lines: { type: 'string' } }));
    if (values.help === true || positionals[0] === 'help') {
      io.stdout(usage);
      return ExitCode.Ok;
    }
    target = resolveTarget(values.url as string | undefined, values.timeout as string | undefined, io.env);
  } catch (error) {
    io.stderr(`molo ${group}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return ExitCode.Usage;
  }
  const node = values.node as string | undefined;
  const json = values.json === true;
  try {
    const [command, ...args] = positionals;
    if (values.args !== undefined && !(group === 'sup' && command === 'scale')) throw new CliUsageError('--args goes with sup scale');
    if (values.lines !== undefined && !(group === 'programs' && command === 'logs')) throw new CliUsageError('--lines goes with programs logs');
    if (group === 'programs' && command === 'logs') return await logs(args, values.lines as string | undefined, node, json, target, io);
    if (group === 'sup' && command === 'scale') return await scale(args, values.args as string | undefined, node, json, target, io);
    if (group === 'sup') return await sup(command, args, node, json, target, io);
    return await programs(command, args, node, json, target, io);
  } catch (error) {
    const usageError = error instanceof CliUsageError;
    const code = (error as { code?: unknown }).code;
    io.stderr(`molo ${group}: ${typeof code === 'string' && !usageError ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n${usageError ? `\n${usage}` : ''}`);
    return usageError ? ExitCode.Usage : ExitCode.Failed;
  }
}

async function logs(args: string[], lines: string | undefined, node: string | undefined, json: boolean, target: Target, io: CliIo): Promise<ExitCode> {
  if (args.length !== 2) throw new CliUsageError('expected: molo programs logs PATH NAME');
  if (lines !== undefined && !/^\d+$/.test(lines)) throw new CliUsageError(`--lines must be a whole number, got ${lines}`);
  const query = new URLSearchParams({ path: args[0]!, program: args[1]!, ...(lines === undefined ? {} : { lines }), ...(node === undefined ? {} : { node }) });
  const body = (await read(target, `/programs/logs?${query.toString()}`)) as ProgramLogs & { node: string };
  if (json) {
    io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    return ExitCode.Ok;
  }
  if (body.dropped > 0) io.stdout(`… ${body.dropped} earlier line${body.dropped === 1 ? '' : 's'} not shown\n`);
  for (const entry of body.lines) io.stdout(`${new Date(entry.at).toISOString()} ${entry.stream === 'stderr' ? 'err' : 'out'} ${entry.pid ?? '-'}  ${entry.line}\n`);
  if (body.lines.length === 0) io.stdout(`no output from ${body.name} yet\n`);
  return ExitCode.Ok;
}

async function scale(args: string[], rawArgs: string | undefined, node: string | undefined, json: boolean, target: Target, io: CliIo): Promise<ExitCode> {
  if (args.length !== 2) throw new CliUsageError('expected: molo sup scale PATH N');
  const count = Number(args[1]);
  if (!Number.isInteger(count) || count < 0) throw new CliUsageError(`N must be a whole number, got ${args[1]}`);
  let startArgs: unknown;
  if (rawArgs !== undefined) {
    try {
      startArgs = JSON.parse(rawArgs);
    } catch {
      throw new CliUsageError(`--args is not JSON: ${rawArgs}`);
    }
    if (!Array.isArray(startArgs)) throw new CliUsageError('--args must be a JSON array');
  }
  const request = { path: args[0], count, ...(startArgs === undefined ? {} : { args: startArgs }), ...(node === undefined ? {} : { node }) };
  const body = (await act(target, '/actions/group/scale', request)) as { node: string; path: string; kind: 'group' | 'task-pool'; queue?: string; max?: number; before: number; after: number; started?: number; terminated?: number };
  const text =
    body.kind === 'task-pool'
      ? `${body.path} on ${body.node}: concurrency ${body.before} → ${body.after} (queue ${body.queue}, at most ${body.max})\n`
      : `${body.path} on ${body.node}: ${body.before} → ${body.after} children (${body.started} started, ${body.terminated} terminated)\n`;
  io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : text);
  return ExitCode.Ok;
}

async function sup(command: string | undefined, args: string[], node: string | undefined, json: boolean, target: Target, io: CliIo): Promise<ExitCode> {
  if (command !== 'restart' && command !== 'terminate') throw new CliUsageError(command === undefined ? 'no sup command given' : `unknown sup command '${command}'`);
  if (args.length !== 1) throw new CliUsageError(`expected: molo sup ${command} PATH`);
  const body = (await act(target, `/actions/child/${command}`, { path: args[0], ...(node === undefined ? {} : { node }) })) as { node: string; path: string; ref?: string | null };
  io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : `${body.path} on ${body.node}: ${command === 'restart' ? `restarted${body.ref ? ` as ${body.ref}` : ''}` : 'terminated'}\n`);
  return ExitCode.Ok;
}

async function programs(command: string | undefined, args: string[], node: string | undefined, json: boolean, target: Target, io: CliIo): Promise<ExitCode> {
  if (command === 'status') {
    if (args.length !== 0) throw new CliUsageError('expected: molo programs status');
    const tree = (await read(target, treePath(node))) as TreeSnapshot;
    const entries = tree.sections?.['programs'] ?? [];
    if (json) {
      io.stdout(`${JSON.stringify(entries, null, 2)}\n`);
      return ExitCode.Ok;
    }
    const table = new Table({ head: ['SUPERVISOR', 'PROGRAM', 'STATE', 'PID', 'RESTARTS', 'TOTAL', 'HEALTH', 'UPTIME'], style: { head: [], border: [] } });
    for (const entry of entries) {
      const status = entry.value as ProgramSupervisorStatus | undefined;
      if (status === undefined) table.push([entry.path, entry.error?.code ?? '?', '', '', '', '', '', '']);
      for (const p of status?.programs ?? []) {
        table.push([entry.path, p.name, p.state, p.pid ?? '', `${p.restartsInWindow}/${p.maxRestarts}`, p.totalRestarts, p.health, p.uptimeMs === undefined ? '' : `${Math.round(p.uptimeMs / 1000)} s`]);
      }
    }
    io.stdout(entries.length === 0 ? `no program supervisors on ${tree.node}\n` : `${table.toString()}\n`);
    return ExitCode.Ok;
  }
  if (command !== 'start' && command !== 'stop' && command !== 'restart') throw new CliUsageError(command === undefined ? 'no programs command given' : `unknown programs command '${command}'`);
  if (args.length !== 2) throw new CliUsageError(`expected: molo programs ${command} PATH NAME`);
  const body = (await act(target, `/actions/program/${command}`, { path: args[0], program: args[1], ...(node === undefined ? {} : { node }) })) as { node: string; program: { name: string; state: string; pid?: number } };
  io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : `${body.program.name} on ${body.node}: ${body.program.state}${body.program.pid === undefined ? '' : ` (pid ${body.program.pid})`}\n`);
  return ExitCode.Ok;
}

function read(target: Target, path: string): Promise<unknown> {
  return getJson(target.url, path, target.timeoutMs, target.token).then((answer) => checked(target, path, answer));
}

function act(target: Target, path: string, body: unknown): Promise<unknown> {
  return postJson(target.url, path, body, target.timeoutMs, target.token).then((answer) => checked(target, path, answer));
}

/** A 2xx body, or AdminBadResponse with the node's error code; a 401 or 403 says what to set. */
function checked(target: Target, path: string, answer: AdminAnswer): unknown {
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  const error = errorOf(answer.body);
  const detail = `${error === undefined ? 'no error body' : `${error.code}: ${error.message}`}${authHint(answer.status, target.token)}`;
  throw new AdminBadResponse(new URL(path, target.url).toString(), answer.status, detail);
}

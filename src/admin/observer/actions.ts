/**
 * Operator actions of the observer page, POST only, each needing the bearer token (the surface
 * answers 401 without it, 403 ADMIN_TOKEN_REQUIRED when it has no token configured at all):
 *
 *   POST /actions/child/restart     { node?, path }            restart a static child (stopped first if running)
 *   POST /actions/child/terminate   { node?, path }            stop a child (static by id, dynamic by ref)
 *   POST /actions/program/start     { node?, path, program }   the program supervisor at `path`
 *   POST /actions/program/stop      { node?, path, program }
 *   POST /actions/program/restart   { node?, path, program }
 *   POST /actions/group/scale       { node?, path, count, args? }  a simple_one_for_one supervisor to
 *                                   `count` children: starts more from its template with `args`
 *                                   (default []), or terminates the newest; a task pool (its
 *                                   supervisor, fetcher or worker group) to `count` tasks at once
 *
 * Task queue actions are the `/tasks` routes (pause, resume, retry, cancel, redrive). A target is
 * named by its path in the node's tree (`root/web/db`), read afresh, so only a process the tree walk
 * reached as a supervisor's child is ever acted on. Every operation is a call of the public
 * Supervisor and ProgramSupervisor APIs (R7-10; test/architecture holds this module's imports).
 */
import { parseRef, type ActorRuntime, type Ref } from '../../actors/index.js';
import { BehaviourErrorCode, Supervisor } from '../../behaviours/index.js';
import { ProgramSupervisor } from '../../behaviours/programs/index.js';
import { TaskWorkerPool } from '../../bus/index.js';
import { Admin } from '../admin-actor.js';
import { AdminActionFailed, AdminBadRequest } from '../errors.js';
import type { ClusterView } from '../nodes-view.js';
import type { TreeNode, TreeSnapshot } from '../tree-snapshot.js';

export const CHILD_ACTIONS = ['restart', 'terminate'] as const;
export const PROGRAM_ACTIONS = ['start', 'stop', 'restart'] as const;
/** Children `group/scale` asks for at most: a group that large is a job for code, not an operator. */
export const MAX_SCALE_COUNT = 10_000;

export type ObserverAction =
  | { readonly target: 'child'; readonly action: (typeof CHILD_ACTIONS)[number] }
  | { readonly target: 'program'; readonly action: (typeof PROGRAM_ACTIONS)[number] }
  | { readonly target: 'group'; readonly action: 'scale' };

/** HTTP status of the behaviours' errors an action may meet. */
export const ACTION_ERROR_STATUS: Readonly<Record<string, number>> = {
  [BehaviourErrorCode.ChildNotFound]: 404,
  [BehaviourErrorCode.ChildRunning]: 409,
  [BehaviourErrorCode.ChildRestarting]: 409,
  [BehaviourErrorCode.DynamicOnly]: 409,
  [BehaviourErrorCode.ProgramNotFound]: 404,
  [BehaviourErrorCode.ProgramAlreadyStarted]: 409,
  [BehaviourErrorCode.StartFailed]: 409,
};

export interface ActionContext {
  readonly runtime: ActorRuntime;
  readonly admin: Ref | string;
  readonly nodes: ClusterView | undefined;
  readonly timeoutMs: number;
}

/** The action of a `/actions/...` path, or undefined. */
export function matchAction(path: string): ObserverAction | undefined {
  const match = /^\/actions\/(child|program|group)\/([a-z]+)$/.exec(path);
  if (match === null) return undefined;
  const [, target, action] = match;
  if (target === 'group') return action === 'scale' ? { target, action } : undefined;
  if (target === 'child' && (CHILD_ACTIONS as readonly string[]).includes(action!)) return { target, action: action as ObserverAction['action'] as 'restart' };
  if (target === 'program' && (PROGRAM_ACTIONS as readonly string[]).includes(action!)) return { target, action: action as 'start' };
  return undefined;
}

interface ActionBody {
  readonly node: string | undefined;
  readonly path: string;
  readonly program: string | undefined;
  /** `group/scale`: the children wanted, and the template's start arguments for new ones. */
  readonly count?: number;
  readonly args?: readonly unknown[];
}

export function actionBody(action: ObserverAction, body: unknown): ActionBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AdminBadRequest('body', 'must be a JSON object');
  const fields = action.target === 'program' ? ['node', 'path', 'program'] : action.target === 'group' ? ['node', 'path', 'count', 'args'] : ['node', 'path'];
  for (const key of Object.keys(body)) if (!fields.includes(key)) throw new AdminBadRequest(key, `is not a field here (fields: ${fields.join(', ')})`);
  const { node, path, program } = body as Record<string, unknown>;
  if (node !== undefined && (typeof node !== 'string' || node.length === 0 || node.length > 300)) throw new AdminBadRequest('node', 'must be a node name');
  if (typeof path !== 'string' || !/^root(\/[^/]{1,300}){0,64}$/.test(path)) throw new AdminBadRequest('path', "must be a tree path such as 'root/web/db'");
  if (action.target === 'program' && (typeof program !== 'string' || program.length === 0 || program.length > 200)) throw new AdminBadRequest('program', 'must be a program name');
  if (action.target === 'group') {
    const { count, args } = body as Record<string, unknown>;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_SCALE_COUNT) throw new AdminBadRequest('count', `must be an integer in 0..${MAX_SCALE_COUNT}`);
    if (args !== undefined && !Array.isArray(args)) throw new AdminBadRequest('args', "must be an array (the template's start arguments)");
    return { node, path, program: undefined, count, args: (args as unknown[] | undefined) ?? [] };
  }
  return { node, path, program: program as string | undefined };
}

/** Runs one action; resolves with what the page shows as its result. */
export async function runAction(context: ActionContext, action: ObserverAction, body: ActionBody): Promise<unknown> {
  const tree = await treeOf(context, body.node);
  const label = `${action.target} ${action.action} ${body.path}`;
  const target = find(tree, body.path);
  if (target === undefined) throw new AdminActionFailed(label, `no process at ${body.path} on ${tree.node}`);
  if (action.target === 'group') return scale(context, tree, target, label, body.count!, body.args ?? []);
  if (action.target === 'program') {
    if (target.section !== 'programs' || target.ref === null) throw new AdminActionFailed(label, `${body.path} is not a program supervisor`);
    const ref = parseRef(target.ref);
    const program = body.program!;
    const run = { start: ProgramSupervisor.startProgram, stop: ProgramSupervisor.stopProgram, restart: ProgramSupervisor.restartProgram }[action.action];
    return { node: tree.node, path: body.path, program: await run(context.runtime, ref, program) };
  }
  const parent = find(tree, body.path.slice(0, body.path.lastIndexOf('/')));
  if (body.path === 'root' || parent === undefined) throw new AdminActionFailed(label, 'the root has no supervisor to ask; stop the node instead');
  if (parent.supervisor === undefined || parent.ref === null) throw new AdminActionFailed(label, `${parent.path} did not answer as a supervisor`);
  const supervisor = parseRef(parent.ref);
  if (action.action === 'terminate') {
    const child = target.id ?? (target.ref === null ? undefined : parseRef(target.ref));
    if (child === undefined) throw new AdminActionFailed(label, 'the child has neither an id nor a ref');
    await Supervisor.terminateChild(context.runtime, supervisor, child, context.timeoutMs);
    return { node: tree.node, path: body.path, terminated: true };
  }
  if (target.id === null) throw new AdminActionFailed(label, 'a dynamic child cannot be restarted by id; terminate it and let its owner start another');
  // OTP's restart_child only starts a stopped child: a running one is stopped first, as an operator means.
  if (target.process !== null || target.state === 'running') await Supervisor.terminateChild(context.runtime, supervisor, target.id, context.timeoutMs);
  const ref = await Supervisor.restartChild(context.runtime, supervisor, target.id, context.timeoutMs);
  return { node: tree.node, path: body.path, ref: ref === undefined ? null : String(ref) };
}

/**
 * A simple_one_for_one supervisor to `count` children, through Supervisor.startChild and
 * terminateChild. The newest children go first when shrinking (OTP has no order; newest-first
 * keeps the longest-lived, warmest ones). A task pool is scaled by its concurrency instead
 * (TaskWorkerPool.setConcurrency): its fetcher, not the worker group's size, decides how many run.
 */
async function scale(context: ActionContext, tree: TreeSnapshot, target: TreeNode, label: string, count: number, args: readonly unknown[]): Promise<unknown> {
  const fetcher = taskPoolFetcher(tree, target);
  if (fetcher !== undefined) {
    if (count < 1) throw new AdminBadRequest('count', 'a task pool runs at least 1 task at once (to stop it taking tasks, pause its queue: molo tasks pause)');
    const ref = parseRef(fetcher);
    const before = await TaskWorkerPool.status(context.runtime, ref, context.timeoutMs);
    const after = await TaskWorkerPool.setConcurrency(context.runtime, ref, count, context.timeoutMs);
    return { node: tree.node, path: target.path, kind: 'task-pool', queue: after.queue, before: before.concurrency, after: after.concurrency, max: after.maxConcurrency };
  }
  if (target.ref === null || target.supervisor === undefined) throw new AdminActionFailed(label, `${target.path} did not answer as a supervisor`);
  if (target.supervisor.strategy !== 'simple_one_for_one') throw new AdminActionFailed(label, `${target.path} is ${target.supervisor.strategy}: only a simple_one_for_one group or a task pool has a size to scale`);
  const supervisor = parseRef(target.ref);
  // Children being restarted count as there (they will be back) but have no ref to stop them by.
  const live = (await Supervisor.whichChildren(context.runtime, supervisor, context.timeoutMs)).filter((child) => child.ref !== undefined);
  const before = live.length;
  let started = 0;
  let terminated = 0;
  try {
    for (let n = before; n < count; n++) {
      await Supervisor.startChild(context.runtime, supervisor, args, context.timeoutMs);
      started++;
    }
    for (const child of live.slice(count).reverse()) {
      if (child.ref === 'restarting' || child.ref === undefined) continue;
      await Supervisor.terminateChild(context.runtime, supervisor, child.ref, context.timeoutMs);
      terminated++;
    }
  } catch (error) {
    throw new AdminActionFailed(label, `stopped after ${started} started and ${terminated} terminated: ${error instanceof Error ? error.message : String(error)}`);
  }
  const counts = await Supervisor.countChildren(context.runtime, supervisor, context.timeoutMs);
  return { node: tree.node, path: target.path, kind: 'group', before, after: counts.active, started, terminated };
}

/** The fetcher ref of the task pool `target` is part of: the pool's supervisor, its fetcher, or its worker group. */
function taskPoolFetcher(tree: TreeSnapshot, target: TreeNode): string | undefined {
  const isFetcher = (node: TreeNode | undefined): boolean => node?.section === 'tasks' && node.ref !== null;
  if (isFetcher(target)) return target.ref!;
  const own = target.children?.find(isFetcher);
  if (own !== undefined) return own.ref!;
  const parent = find(tree, target.path.slice(0, target.path.lastIndexOf('/')));
  return parent?.children?.find(isFetcher)?.ref ?? undefined;
}

export function treeOf(context: ActionContext, node: string | undefined): Promise<TreeSnapshot> {
  if (node === undefined || node === context.runtime.node) return Admin.tree(context.runtime, context.admin, context.timeoutMs);
  if (context.nodes === undefined) throw new AdminBadRequest('node', `names another node, and this surface is not a cluster node`);
  return context.nodes.tree(node, context.timeoutMs);
}

export function find(tree: TreeSnapshot, path: string): TreeNode | undefined {
  let node: TreeNode | null | undefined = tree.root;
  if (node === null || node === undefined) return undefined;
  const segments = path.split('/');
  if (segments[0] !== 'root') return undefined;
  for (const segment of segments.slice(1)) {
    node = node.children?.find((child) => child.path.slice(child.path.lastIndexOf('/') + 1) === segment);
    if (node === undefined) return undefined;
  }
  return node;
}

import type { CallRequest, ExitReason, Ref } from '../actors/index.js';
import { resolveChildSpec, type ChildSpec, type ResolvedChildSpec, type StartedChild } from './child-spec.js';
import {
  ChildAlreadyPresent,
  ChildAlreadyStarted,
  ChildNotFound,
  ChildRestarting,
  ChildRunning,
  DynamicOnly,
  StartFailed,
  TooManyChildren,
} from './errors.js';
import type { RestartLog } from './intensity.js';
import type { ChildTable } from './supervisor-children.js';
import { childEntry, countChildren, type ChildRecord } from './supervisor-queries.js';
import type { ChildEntry, SupervisorReply, SupervisorRequest, SupervisorStatus } from './supervisor-protocol.js';

/**
 * The supervisor's API (OTP's start_child, terminate_child, which_children, …), answered inside
 * the supervisor as calls, with OTP's answers for each odd case.
 */
export async function answerSupervisorCall(
  table: ChildTable,
  restarts: RestartLog,
  call: CallRequest<SupervisorRequest, SupervisorReply<unknown>>,
): Promise<void> {
  let reply: SupervisorReply<unknown>;
  try {
    reply = { ok: true, value: await perform(table, restarts, call.request) };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? error : new StartFailed(error === undefined ? 'undefined' : (error as ExitReason)) };
  }
  call.reply(reply);
}

function perform(table: ChildTable, restarts: RestartLog, request: SupervisorRequest): unknown {
  switch (request.op) {
    case 'startChild':
      return startChild(table, request.spec, request.args);
    case 'terminateChild':
      return terminateChild(table, request.child);
    case 'restartChild':
      return restartChild(table, request.id);
    case 'deleteChild':
      return deleteChild(table, request.id);
    case 'whichChild':
      return childEntry(findChild(table, request.child, 'whichChild'), table.dynamic);
    case 'getChildSpec':
      return findChild(table, request.child, 'getChildSpec').spec;
    case 'whichChildren':
      return [...table.children.values()].map((record): ChildEntry => childEntry(record, table.dynamic));
    case 'countChildren':
      return countChildren(table.children.values(), table.dynamic);
    case 'status':
      return status(table, restarts);
    default: {
      const unknownRequest: never = request;
      throw new Error(`unknown supervisor request ${JSON.stringify(unknownRequest)}`);
    }
  }
}

async function startChild(table: ChildTable, spec: ChildSpec | undefined, args: readonly unknown[]): Promise<StartedChild> {
  const settings = table.settings;
  let resolved: ResolvedChildSpec;
  if (table.dynamic) {
    resolved = settings.children[0]!;
  } else {
    if (spec === undefined) throw new DynamicOnly('startChild with arguments');
    resolved = resolveChildSpec(spec, settings.autoShutdown);
    const existing = table.children.get(resolved.id);
    if (existing !== undefined) {
      if (existing.ref !== undefined) throw new ChildAlreadyStarted(existing.key, existing.ref);
      throw new ChildAlreadyPresent(existing.key);
    }
  }
  // After the checks above: an existing id is reported as such, even at the cap.
  if (table.children.size >= settings.maxChildren) throw new TooManyChildren(settings.maxChildren);
  const record = table.add(resolved, args);
  const outcome = await table.start(record, 'START');
  if (!outcome.ok) {
    // OTP discards the spec of a child that fails to start.
    table.delete(record);
    throw new StartFailed(outcome.reason);
  }
  // OTP keeps no spec for a dynamic or temporary child that answered ignore.
  if (record.ref === undefined && (table.dynamic || record.spec.restart === 'temporary')) table.delete(record);
  return { ref: record.ref, extra: outcome.extra };
}

/**
 * OTP's find_child: a static child by id (a ref is not an id there: not_found); a dynamic child
 * by ref, also by the ref it had before a restart that is still pending; an id is refused.
 */
function lookup(table: ChildTable, child: string | Ref, operation: string): ChildRecord | undefined {
  if (!table.dynamic) return typeof child === 'string' ? table.children.get(child) : undefined;
  if (typeof child === 'string') throw new DynamicOnly(`${operation} by id`);
  const record = table.byRef.get(child);
  if (record !== undefined) return record;
  // By value: the caller may hold a ref rebuilt from its parts (JSON, a frame), not the one start
  // returned. A scan, but only on a miss, in an administrative call.
  for (const candidate of table.children.values()) {
    if (candidate.ref !== undefined ? candidate.ref.equals(child) : candidate.lastRef?.equals(child) === true) return candidate;
  }
  return undefined;
}

function findChild(table: ChildTable, child: string | Ref, operation: string): ChildRecord {
  const record = lookup(table, child, operation);
  if (record === undefined) throw new ChildNotFound(String(child));
  return record;
}

async function terminateChild(table: ChildTable, child: string | Ref): Promise<void> {
  const record = lookup(table, child, 'terminateChild');
  if (record === undefined) {
    // OTP: a dynamic child that has already exited is terminated, whoever it was.
    if (table.dynamic && typeof child !== 'string' && !table.ctx.system.isAlive(child)) return;
    throw new ChildNotFound(String(child));
  }
  await table.stop(record);
  // Deleting a restarting dynamic child also ends its restart loop: its retry finds nothing.
  if (table.dynamic || record.spec.restart === 'temporary') table.delete(record);
}

async function restartChild(table: ChildTable, id: string): Promise<StartedChild> {
  const record = staticChild(table, id, 'restartChild');
  if (record.state === 'backoff') throw new ChildRestarting(id);
  if (record.ref !== undefined) throw new ChildRunning(id);
  const outcome = await table.start(record, 'START');
  if (!outcome.ok) {
    table.move(record, 'START_REFUSED');
    throw new StartFailed(outcome.reason);
  }
  return { ref: record.ref, extra: outcome.extra };
}

function deleteChild(table: ChildTable, id: string): void {
  const record = staticChild(table, id, 'deleteChild');
  if (record.state === 'backoff') throw new ChildRestarting(id);
  if (record.ref !== undefined) throw new ChildRunning(id);
  table.delete(record);
}

function staticChild(table: ChildTable, id: string, operation: string): ChildRecord {
  if (table.dynamic) throw new DynamicOnly(operation);
  const record = table.children.get(id);
  if (record === undefined) throw new ChildNotFound(id);
  return record;
}

function status(table: ChildTable, restarts: RestartLog): SupervisorStatus {
  const settings = table.settings;
  const inWindow = restarts.count(table.ctx.now());
  return {
    strategy: settings.strategy,
    intensity: settings.intensity,
    periodMs: settings.periodMs,
    restartsInWindow: inWindow,
    remainingIntensity: Math.max(0, settings.intensity - inWindow),
    children: [...table.children.values()].map((record) => ({
      id: table.dynamic ? undefined : record.key,
      ref: record.ref,
      state: record.state,
      type: record.spec.type,
      restart: record.spec.restart,
      restartCount: record.restartCount,
    })),
  };
}

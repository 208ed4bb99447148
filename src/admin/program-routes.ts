/**
 * `GET /programs/logs?path=root/programs&program=NAME[&lines=N][&node=NODE]`: the last output lines
 * a program supervisor kept of one program (ProgramSupervisor.logs), for `molo programs logs`. A
 * read, so it follows the surface's token rule like /tree; the supervisor is found by its tree path,
 * read afresh, as the observer actions find theirs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRef } from '../actors/index.js';
import { BehaviourErrorCode } from '../behaviours/index.js';
import { PROGRAM_LOG_TAIL_LIMITS, ProgramSupervisor, DEFAULT_LOG_LINES } from '../behaviours/programs/index.js';
import { serveAdmitted, type AdmissionCounter, type AdmissionLimits } from './admission.js';
import { AdminActionFailed, AdminBadRequest, AdminMethodNotAllowed } from './errors.js';
import { errorBody, sendJson, statusFor } from './http-response.js';
import { find, treeOf, type ActionContext } from './observer/actions.js';

export const PROGRAM_LOGS_PATH = '/programs/logs';

export async function serveProgramLogs(context: ActionContext, limits: AdmissionLimits, listener: AdmissionCounter, request: IncomingMessage, url: URL, response: ServerResponse): Promise<void> {
  if (request.method !== 'GET') {
    response.setHeader('allow', 'GET');
    sendJson(response, 405, errorBody(new AdminMethodNotAllowed(request.method ?? '?')));
    return;
  }
  await serveAdmitted(listener, limits, request, response, async () => {
    try {
      sendJson(response, 200, await programLogs(context, url.searchParams));
    } catch (error) {
      sendJson(response, statusFor(error, { [BehaviourErrorCode.ProgramNotFound]: 404 }), errorBody(error));
    }
  });
}

async function programLogs(context: ActionContext, query: URLSearchParams): Promise<unknown> {
  for (const key of query.keys()) if (!['path', 'program', 'lines', 'node'].includes(key)) throw new AdminBadRequest(key, 'is not a parameter here (path, program, lines, node)');
  const path = query.get('path');
  const program = query.get('program');
  const node = query.get('node') ?? undefined;
  if (path === null || !/^root(\/[^/]{1,300}){0,64}$/.test(path)) throw new AdminBadRequest('path', "must be a tree path such as 'root/programs'");
  if (program === null || program.length === 0 || program.length > 200) throw new AdminBadRequest('program', 'must be a program name');
  const rawLines = query.get('lines');
  const lines = rawLines === null ? DEFAULT_LOG_LINES : Number(rawLines);
  if (!Number.isInteger(lines) || lines < 1 || lines > PROGRAM_LOG_TAIL_LIMITS.maxLines) throw new AdminBadRequest('lines', `must be an integer in 1..${PROGRAM_LOG_TAIL_LIMITS.maxLines}`);
  const tree = await treeOf(context, node);
  const target = find(tree, path);
  const label = `program logs ${path}`;
  if (target === undefined) throw new AdminActionFailed(label, `no process at ${path} on ${tree.node}`);
  if (target.section !== 'programs' || target.ref === null) throw new AdminActionFailed(label, `${path} is not a program supervisor`);
  const logs = await ProgramSupervisor.logs(context.runtime, parseRef(target.ref), program, lines, context.timeoutMs);
  return { node: tree.node, path, ...logs };
}

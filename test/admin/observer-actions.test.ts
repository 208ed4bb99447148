/**
 * The observer's operator actions on a real node with a real OS program: restart and terminate a
 * supervisor child, stop, start and restart a program, each named by its tree path; the bearer
 * token required (401 without it, 403 on a surface that has none); typed refusals for bad targets.
 */
import { describe, expect, it } from 'vitest';
import type { TreeNode, TreeSnapshot } from '../../src/admin/index.js';
import { GenServer, ProgramSupervisor, Supervisor, type ProgramSupervisorStatus } from '../../src/behaviours/index.js';
import { eventually, sleep } from '../support/systems.js';
import { Counter, getJson, startTestNode } from './helpers.js';

const TOKEN = 'observer-actions-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const counter = (id: string) => ({ id, start: ({ system, parent }: { system: any; parent: any }) => GenServer.start(system, () => new Counter(id), { link: parent }) });
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

async function post(url: string, body: unknown, headers: Record<string, string> = AUTH): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

function at(tree: TreeSnapshot, path: string): TreeNode | undefined {
  const visit = (node: TreeNode): TreeNode | undefined => (node.path === path ? node : node.children?.map(visit).find((found) => found !== undefined));
  return tree.root === null ? undefined : visit(tree.root);
}

async function tree(url: string): Promise<TreeSnapshot> {
  return (await fetch(`${url}/tree`, { headers: AUTH })).json() as Promise<TreeSnapshot>;
}

describe('observer actions', () => {
  it('restart and terminate children by path, through the Supervisor API, with the token only', async () => {
    const { node } = await startTestNode({
      root: { children: [counter('worker'), Supervisor.child('group', { children: [counter('inner')] })] },
      admin: { port: 0, token: TOKEN },
    });
    const url = node.adminUrl!;
    const before = at(await tree(url), 'root/worker')!;
    expect(before.state).toBe('running');

    const anonymous = await post(`${url}/actions/child/restart`, { path: 'root/worker' }, { 'content-type': 'application/json' });
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'ADMIN_UNAUTHORIZED']);
    const wrong = await post(`${url}/actions/child/restart`, { path: 'root/worker' }, { ...AUTH, authorization: 'Bearer not-the-token-at-all-000' });
    expect(wrong.status).toBe(401);
    expect(at(await tree(url), 'root/worker')!.ref).toBe(before.ref);

    const restarted = await post(`${url}/actions/child/restart`, { path: 'root/worker' });
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ node: node.system.node, path: 'root/worker', ref: expect.any(String) });
    expect(restarted.body.ref).not.toBe(before.ref);
    const after = at(await tree(url), 'root/worker')!;
    expect([after.state, after.ref]).toEqual(['running', restarted.body.ref]);

    const terminated = await post(`${url}/actions/child/terminate`, { path: 'root/group/inner' });
    expect(terminated).toMatchObject({ status: 200, body: { terminated: true } });
    expect(at(await tree(url), 'root/group/inner')).toMatchObject({ state: 'stopped', process: null });
    // A stopped child is started again by restart.
    expect((await post(`${url}/actions/child/restart`, { path: 'root/group/inner' })).status).toBe(200);
    expect(at(await tree(url), 'root/group/inner')!.state).toBe('running');

    const missing = await post(`${url}/actions/child/restart`, { path: 'root/nope' });
    expect([missing.status, missing.body.error.code]).toEqual([409, 'ADMIN_ACTION_FAILED']);
    expect((await post(`${url}/actions/child/terminate`, { path: 'root' })).body.error.code).toBe('ADMIN_ACTION_FAILED');
    const badField = await post(`${url}/actions/child/restart`, { path: 'root/worker', force: true });
    expect([badField.status, badField.body.error.code]).toEqual([400, 'ADMIN_BAD_REQUEST']);
    expect((await post(`${url}/actions/child/restart`, { path: '../etc' })).status).toBe(400);
    expect((await post(`${url}/actions/child/restart`, { path: 'root/worker', node: 'elsewhere@127.0.0.1:1' })).status).toBe(400);
    const get = await fetch(`${url}/actions/child/restart`, { headers: AUTH });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await post(`${url}/actions/child/explode`, { path: 'root/worker' })).status).toBe(404);
  });

  it('stop, start and restart an OS program through the ProgramSupervisor API', { timeout: 30_000 }, async () => {
    const { node } = await startTestNode({
      root: {
        children: [
          counter('worker'),
          ProgramSupervisor.child('programs', { programs: [{ name: 'sleeper', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'], stopTimeoutMs: 2_000 }], logger: quiet }),
        ],
      },
      admin: { port: 0, token: TOKEN },
    });
    const url = node.adminUrl!;
    const program = async () => ((await tree(url)).sections['programs']![0]!.value as ProgramSupervisorStatus).programs[0]!;
    for (let attempt = 0; attempt < 100 && (await program()).state !== 'running'; attempt++) await sleep(20);
    const pid = (await program()).pid!;

    const stopped = await post(`${url}/actions/program/stop`, { path: 'root/programs', program: 'sleeper' });
    expect(stopped).toMatchObject({ status: 200, body: { program: { name: 'sleeper', state: 'stopped' } } });
    await eventually(() => !alive(pid), 5_000, 'the program process gone');
    const started = await post(`${url}/actions/program/start`, { path: 'root/programs', program: 'sleeper' });
    expect(started).toMatchObject({ status: 200, body: { program: { state: 'running', pid: expect.any(Number) } } });
    const restarted = await post(`${url}/actions/program/restart`, { path: 'root/programs', program: 'sleeper' });
    expect(restarted.body.program.state).toBe('running');
    expect(restarted.body.program.pid).not.toBe(started.body.program.pid);
    expect(alive(restarted.body.program.pid)).toBe(true);

    const notProgram = await post(`${url}/actions/program/start`, { path: 'root/worker', program: 'sleeper' });
    expect([notProgram.status, notProgram.body.error.code]).toEqual([409, 'ADMIN_ACTION_FAILED']);
    const unknown = await post(`${url}/actions/program/start`, { path: 'root/programs', program: 'ghost' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'PROGRAM_NOT_FOUND']);
    const already = await post(`${url}/actions/program/start`, { path: 'root/programs', program: 'sleeper' });
    expect([already.status, already.body.error.code]).toEqual([409, 'PROGRAM_ALREADY_STARTED']);
    expect((await post(`${url}/actions/program/start`, { path: 'root/programs' })).status).toBe(400);
  });

  it('are refused outright (403) on a surface without a token', async () => {
    const { node } = await startTestNode({ root: { children: [counter('worker')] } });
    const before = (await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body;
    const refused = await post(`${node.adminUrl}/actions/child/restart`, { path: 'root/worker' }, { 'content-type': 'application/json' });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ADMIN_TOKEN_REQUIRED']);
    expect(at((await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body, 'root/worker')!.ref).toBe(at(before, 'root/worker')!.ref);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

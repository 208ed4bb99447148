import { describe, expect, it } from 'vitest';
import type { ActorRuntime, Ref } from '../../src/actors/index.js';
import {
  Admin,
  ADMIN_NAME,
  AdminErrorCode,
  MAX_CONCURRENT_SNAPSHOTS,
  MAX_SNAPSHOT_BYTES,
  programsProvider,
  type SectionEntry,
  type SnapshotProvider,
  type TreeNode,
  type TreeSnapshot,
} from '../../src/admin/index.js';
import { GenServer, Supervisor, worker, type ChildSpec } from '../../src/behaviours/index.js';
import {
  liveProgramProcessCount,
  ProgramSupervisor,
  type ProgramSupervisorStatus,
} from '../../src/behaviours/programs/index.js';
import { runCli } from '../../src/cli/run.js';
import { eventually, sleep, testSystem } from '../support/systems.js';
import { Counter, getJson, startTestNode } from './helpers.js';

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** A bare actor linked to its supervisor: the cheapest child there is. */
const bareChild: ChildSpec = { id: 'bare', start: ({ system, parent }) => system.spawn(() => {}, { link: parent }) };

async function addChildren(system: ActorRuntime, supervisor: Ref, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await Supervisor.startChild(system, supervisor, []);
}

/** Some manager of its own children that is no Supervisor: it has its own status API. */
class PoolManager extends GenServer<'status', { pools: { name: string; health: string }[] }> {
  override handleCall(): { pools: { name: string; health: string }[] } {
    return { pools: [{ name: 'db', health: 'healthy' }] };
  }
}
const poolStatus = (system: ActorRuntime, ref: Ref): Promise<unknown> => GenServer.call<PoolManager>(system, ref, 'status');
const poolProvider: SnapshotProvider = { behaviour: 'PoolManager', section: 'pools', describe: poolStatus };
const managerChild = (id: string): ChildSpec => ({ ...worker(id, () => new PoolManager()), type: 'supervisor' });

describe('admin actor', () => {
  it('is registered as `admin` and answers through its API', async () => {
    const { node } = await startTestNode({ root: { children: [worker('w', () => new Counter())] }, admin: false });
    expect(node.adminUrl).toBeUndefined();
    expect(node.system.whereis(ADMIN_NAME)).toEqual(node.admin);
    const tree = await Admin.tree(node.system);
    expect(tree.root?.children?.map((entry) => entry.id)).toEqual(['w']);
    expect((await Admin.health(node.system)).status).toBe('ok');
    expect((await Admin.processes(node.system)).total).toBe(3);
    await node.stop();
  });

  it('caps a tree snapshot at maxSnapshotBytes and says truncated', async () => {
    const { node } = await startTestNode({
      root: { children: [Supervisor.child('pool', { strategy: 'simple_one_for_one', children: [bareChild] })] },
      snapshot: { maxSnapshotBytes: 8_192 },
    });
    const pool = (await Supervisor.whichChildren(node.system, node.root))[0]!.ref as Ref;
    await addChildren(node.system, pool, 200);
    const { body } = await getJson<TreeSnapshot>(`${node.adminUrl}/tree`);
    expect(body.truncated).toBe(true);
    expect(body.maxBytes).toBe(8_192);
    expect(bytes(body)).toBeLessThanOrEqual(8_192);
    const poolNode = body.root!.children![0]!;
    expect(poolNode.children!.length).toBeGreaterThan(0);
    expect(poolNode.children!.length + poolNode.childrenOmitted!).toBe(200);
    expect(body.omitted).toBe(poolNode.childrenOmitted);
    // Dynamic children have no id: their path segment is their ref.
    expect(poolNode.children![0]).toMatchObject({ id: null, path: `root/pool/${poolNode.children![0]!.ref}` });

    const processes = await Admin.processes(node.system);
    expect(processes.truncated).toBe(true);
    expect(processes.total).toBe(node.system.actorCount);
    expect(processes.processes.length).toBeLessThan(processes.total);
    expect(bytes(processes)).toBeLessThanOrEqual(8_192);
    await node.stop();
  });

  it('holds the default cap of 1 MiB (S7-10) on a large tree', async () => {
    const { node } = await startTestNode({
      root: { children: [Supervisor.child('pool', { strategy: 'simple_one_for_one', children: [bareChild] })] },
      admin: false,
    });
    const pool = (await Supervisor.whichChildren(node.system, node.root))[0]!.ref as Ref;
    await addChildren(node.system, pool, 6_000);
    const tree = await Admin.tree(node.system);
    expect(tree.maxBytes).toBe(MAX_SNAPSHOT_BYTES);
    expect(tree.truncated).toBe(true);
    const size = bytes(tree);
    expect(size).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
    expect(size).toBeGreaterThan(MAX_SNAPSHOT_BYTES * 0.9);
    await node.stop();
  }, 30_000);

  it('describes processes outside the Supervisor API through a snapshot provider', async () => {
    const { node } = await startTestNode({
      root: { children: [worker('w', () => new Counter()), managerChild('pools')] },
      snapshotProviders: [poolProvider],
    });
    const { body } = await getJson<TreeSnapshot>(`${node.adminUrl}/tree`);
    expect(body.errors).toBe(0);
    const pools = body.root!.children![1]!;
    expect(pools).toMatchObject({ id: 'pools', type: 'supervisor', section: 'pools', process: { behaviour: 'PoolManager' } });
    expect(pools.children).toBeUndefined();
    expect(body.sections['pools']).toEqual([{ path: 'root/pools', ref: pools.ref, value: { pools: [{ name: 'db', health: 'healthy' }] } }]);
    await node.stop();
  });

  it('shows supervised OS programs and their health by default', async () => {
    const { node } = await startTestNode({
      root: {
        children: [
          ProgramSupervisor.child('programs', {
            programs: [{ name: 'sleeper', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'] }],
            logger: { info: () => {}, warn: () => {}, error: () => {} },
          }),
        ],
      },
    });
    let programs: SectionEntry[] = [];
    for (let attempt = 0; attempt < 100; attempt++) {
      programs = [...((await getJson<TreeSnapshot>(`${node.adminUrl}/tree`)).body.sections['programs'] ?? [])];
      if ((programs[0]?.value as ProgramSupervisorStatus | undefined)?.programs[0]?.state === 'running') break;
      await sleep(20);
    }
    expect(programs).toHaveLength(1);
    expect(programs[0]).toMatchObject({ path: 'root/programs' });
    const status = programs[0]!.value as ProgramSupervisorStatus;
    expect(status.programs[0]).toMatchObject({ name: 'sleeper', state: 'running', health: 'unchecked' });
    const pid = status.programs[0]!.pid!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    // `molo tree` lists each program with its state and health.
    let printed = '';
    const code = await runCli(['tree', '--url', node.adminUrl!], { stdout: (text) => (printed += text), stderr: () => {}, env: {} });
    expect(code).toBe(0);
    expect(printed).toMatch(/├?└?─ programs \(worker ProgramSupervisorServer\) {2}running .*\[programs\]/);
    expect(printed).toContain(`\nprograms:\n  root/programs  ${programs[0]!.ref}\n    sleeper  running  pid ${pid}  health unchecked  restarts 0/5 in window  total 0\n`);
    expect(await node.stop()).toMatchObject({ clean: true });
    await eventually(() => liveProgramProcessCount() === 0, 5_000, 'program process gone');
  });

  it('never sends the supervisor protocol to a supervisor-typed child it cannot read', async () => {
    const { node } = await startTestNode({
      root: { children: [managerChild('pools')] },
    });
    const tree = await Admin.tree(node.system);
    const pools = tree.root!.children![0]!;
    expect(tree.errors).toBe(1);
    expect(pools.error?.code).toBe(AdminErrorCode.SnapshotFailed);
    expect(pools.error?.message).toContain("behaviour 'PoolManager'");
    expect(pools.process?.messagesHandled).toBe(0);
    const ref = (await Supervisor.whichChildren(node.system, node.root))[0]!.ref as Ref;
    expect(node.system.info(ref)).toMatchObject({ behaviour: 'PoolManager', messagesHandled: 0 });
    await node.stop();
  });

  it('bounds slow supervisors and providers by the call timeout, and caps concurrent snapshots', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const never = new Promise<unknown>(() => {});
    const { node } = await startTestNode({
      root: {
        children: [
          Supervisor.child('busy', { strategy: 'one_for_one', children: [] }),
          managerChild('pools'),
        ],
      },
      snapshotProviders: [{ ...poolProvider, describe: () => never }],
      snapshot: { callTimeoutMs: 150 },
      admin: false,
    });
    const busy = (await Supervisor.whichChildren(node.system, node.root))[0]!.ref as Ref;
    // A child whose start waits keeps `busy` inside startChild: it cannot answer status meanwhile.
    const starting = Supervisor.startChild(node.system, busy, {
      id: 'slow-start',
      start: async ({ system, parent }) => {
        await gate;
        return system.spawn(() => {}, { link: parent });
      },
    });

    const snapshots = Array.from({ length: MAX_CONCURRENT_SNAPSHOTS }, () => Admin.tree(node.system));
    await expect(Admin.tree(node.system)).rejects.toMatchObject({ code: AdminErrorCode.Busy });
    // Health does not wait behind the snapshots.
    expect((await Admin.health(node.system)).status).toBe('ok');
    for (const snapshot of await Promise.all(snapshots)) {
      const [busyNode, poolsNode] = snapshot.root!.children!;
      expect(busyNode!.error?.code).toBe(AdminErrorCode.SnapshotTimeout);
      expect(snapshot.sections['pools']![0]!.error?.code).toBe(AdminErrorCode.SnapshotTimeout);
      expect(poolsNode!.section).toBe('pools');
      expect(snapshot.errors).toBe(2);
    }
    release();
    await starting;
    const settled = await Admin.tree(node.system);
    expect(settled.root!.children![0]!.children!.map((entry: TreeNode) => entry.id)).toEqual(['slow-start']);
    await node.stop();
  });

  it('validates its options at the boundary', async () => {
    const system = testSystem();
    await expect(Admin.start({ system, maxSnapshotBytes: MAX_SNAPSHOT_BYTES + 1 })).rejects.toMatchObject({
      code: AdminErrorCode.InvalidOption,
      option: 'maxSnapshotBytes',
    });
    await expect(Admin.start({ system, callTimeoutMs: 0 })).rejects.toMatchObject({ option: 'callTimeoutMs' });
    await expect(
      Admin.start({
        system,
        providers: [programsProvider(poolStatus), programsProvider(poolStatus)],
      }),
    ).rejects.toMatchObject({ option: 'snapshotProviders' });
    // Without a root attached the admin still answers, health says `starting`.
    const admin = await Admin.start({ system });
    expect(await Admin.health(system, admin)).toMatchObject({ status: 'starting', root: null });
    expect((await Admin.tree(system, admin)).root).toBeNull();
    await Admin.stop(system, admin);
  });

  it('answers ADMIN_UNAVAILABLE once the admin actor is gone', async () => {
    const system = testSystem();
    await expect(Admin.health(system)).rejects.toMatchObject({ code: AdminErrorCode.Unavailable });
  });
});

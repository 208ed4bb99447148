import { fork, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Supervisor } from '../../../src/behaviours/index.js';
import { createPostgresPool, type Database } from '../../../src/data/index.js';
import { Discovery, postgresRegistry, staticNodes, InvalidNodeOption, type DiscoveryStrategy } from '../../../src/nodes/index.js';
import type { Ref } from '../../../src/actors/index.js';
import { freshDatabase, psql, type FreshDatabase } from '../../support/pg.js';
import { reapChildrenAfterEach } from '../../support/reap-children.js';
import { projectRoot } from '../../support/run-script.js';
import { eventually } from '../../support/systems.js';
import { eventuallyAsync } from '../../data/kv/stores.js';
import { testNode } from '../support.js';

const spawned = reapChildrenAfterEach<ChildProcess>();
let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('discovery');
});
afterAll(() => fresh.drop());

/** An instance in its own process, registered in the shared registry; resolves with its node name. */
function instance(): Promise<{ name: string; child: ChildProcess }> {
  const child = fork('test/nodes/fixtures/discovery-node.ts', [fresh.database], {
    cwd: projectRoot,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, MOLO_PG_HOST: fresh.host, MOLO_PG_PORT: String(fresh.port), MOLO_PG_USER: fresh.user },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  spawned.add(child);
  return new Promise((resolve, reject) => {
    child.once('message', (message: { ready?: string }) => resolve({ name: message.ready!, child }));
    child.once('exit', (code) => reject(new Error(`instance exited (${String(code)})`)));
  });
}

const registered = (): string[] => psql(`SELECT node FROM molo_node_registry WHERE cluster = 'c1' AND expires_at > now() ORDER BY node`, fresh.database).split('\n').filter(Boolean);

async function database(node: Awaited<ReturnType<typeof testNode>>): Promise<Database> {
  return createPostgresPool(node.system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 2 });
}

describe('the Postgres registry', () => {
  it('instances in their own processes join without configuration; a SIGKILLed one leaves at its TTL', { timeout: 60_000 }, async () => {
    const self = await testNode('app', { detectionMs: 1_000 });
    const db = await database(self);
    const ref = await Discovery.start(self, { strategy: postgresRegistry({ db, cluster: 'c1', ttlMs: 1_000 }), intervalMs: 200 });
    const [one, two] = await Promise.all([instance(), instance()]);
    await eventually(() => self.isConnected(one.name) && self.isConnected(two.name), 20_000, 'both instances connected');
    expect(registered()).toEqual([self.name, one.name, two.name].sort());

    one.child.kill('SIGKILL');
    await eventually(() => !registered().includes(one.name), 10_000, 'the killed instance expired from the registry');
    await eventually(() => !self.isConnected(one.name), 10_000, 'its link down');
    await eventuallyAsync(async () => !(await Discovery.status(self.system, ref)).nodes.includes(one.name), 10_000, 'discovery let go of it');
    expect(self.isConnected(two.name)).toBe(true);

    // A third instance started later joins the same way; the survivors are connected to each other too.
    const three = await instance();
    await eventually(() => self.isConnected(three.name), 20_000, 'the new instance connected');
    three.child.send('nodes');
    const seen = await new Promise<string[]>((resolve) => three.child.once('message', (message: { nodes: string[] }) => resolve(message.nodes)));
    expect(seen).toEqual(expect.arrayContaining([self.name, two.name]));
    expect(seen).not.toContain(one.name);
  });

  it('an instance that stops withdraws at once, not at expiry', async () => {
    const self = await testNode('app');
    const db = await database(self);
    const root = await Supervisor.start(self.system, {
      strategy: 'one_for_one',
      children: [Discovery.child('discovery', self, { strategy: postgresRegistry({ db, cluster: 'c1', ttlMs: 600_000 }), intervalMs: 200 })],
    });
    await eventually(() => registered().includes(self.name), 10_000, 'announced');
    await Supervisor.stop(self.system, root);
    expect(registered()).not.toContain(self.name);
  });

  it('supervised: a strategy failing past maxFailures crashes the actor, and its supervisor restarts it', async () => {
    const self = await testNode('app');
    const peer = await testNode('app');
    let calls = 0;
    const flaky: DiscoveryStrategy = {
      kind: 'flaky',
      list: () => (++calls <= 2 ? Promise.reject(new Error('registry unreachable')) : Promise.resolve([peer.name])),
    };
    const root = await Supervisor.start(self.system, {
      strategy: 'one_for_one',
      children: [Discovery.child('discovery', self, { strategy: flaky, intervalMs: 100, maxFailures: 2 })],
    });
    const first = (await Supervisor.whichChildren(self.system, root))[0]!.ref as Ref;
    await eventually(() => self.isConnected(peer.name), 10_000, 'connected after the restart');
    const second = (await Supervisor.whichChildren(self.system, root))[0]!.ref as Ref;
    expect(second.equals(first)).toBe(false);
    expect(await Discovery.status(self.system, second)).toMatchObject({ strategy: 'flaky', failures: 0, nodes: [peer.name] });
    await Supervisor.stop(self.system, root);
  });

  it('caps what one round may dial, and refuses names that are not node names', async () => {
    const self = await testNode('app');
    const peers = await Promise.all([testNode('app'), testNode('app'), testNode('app')]);
    const listed: DiscoveryStrategy = { kind: 'hostile', list: () => Promise.resolve(['not a node', ...peers.map((peer) => peer.name), 'x@y']) };
    const ref = await Discovery.start(self, { strategy: listed, intervalMs: 100, maxNodes: 2 });
    await eventually(() => self.nodes().length === 2, 10_000, 'two connected');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(self.nodes()).toHaveLength(2);
    expect(await Discovery.status(self.system, ref)).toMatchObject({ refused: 3 });
  });

  it('refuses bad options, naming the setting and the nearest key', async () => {
    const self = await testNode('app');
    expect(() => Discovery.start(self, { strategy: staticNodes([]), interval: 5 } as never)).toThrow(/discovery\.interval: unknown option; did you mean intervalMs\?/);
    expect(() => Discovery.start(self, { strategy: staticNodes([]), maxNodes: 100_000 })).toThrow(/discovery\.maxNodes/);
    expect(() => staticNodes(['nope'])).toThrow();
    const sqliteLike = { backend: 'sqlite' } as unknown as Database;
    expect(() => postgresRegistry({ db: sqliteLike })).toThrow(InvalidNodeOption);
    expect(() => postgresRegistry({ db: sqliteLike, ttl: 5 } as never)).toThrow(/did you mean ttlMs\?/);
  });
});

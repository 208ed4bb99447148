/**
 * One node of the cluster example, in its own OS process, started by main.ts: a Molo node with the
 * cluster services (global registry, process groups, cluster topics) and an admin surface
 * (`/nodes`, `/tree`, `/nodes/<name>/tree`). Node `a` runs the scenario when main.ts asks.
 * Started by main.ts (with its Node flags): examples/cluster/node.ts <label>
 */
import { behaviourModule, DownMessage, formatReason, type Ref } from 'molo/actors';
import { Admin, ADMIN_NAME, clusterView, startAdminHttp } from 'molo/admin';
import { Supervisor } from 'molo/behaviours';
import { createBroker } from 'molo/bus';
import { startClusterTopics, startGlobal, startGroups, startNode } from 'molo/nodes';

const label = process.argv[2]!;
const say = (text: string): void => void process.stdout.write(`[${label}] ${text}\n`);
const tell = (message: Record<string, unknown>): void => void process.send?.(message);

const node = await startNode({
  name: `${label}@127.0.0.1:0`,
  secret: process.env['MOLO_CLUSTER_SECRET'] ?? 'molo-example-cluster-secret-0123',
  // Peers may spawn the modules of this directory here, nothing else.
  remoteSpawn: [new URL('./', import.meta.url).href],
  detectionMs: 2_000,
  reconnectMinMs: 100,
  reconnectMaxMs: 1_000,
  system: { logger: false },
});
const system = node.system;
const global = startGlobal(node);
const groups = startGroups(node);
const broker = createBroker({ system });
const topics = startClusterTopics(node, broker);
broker.subscribe('cluster:news', (message) => {
  say(`news: ${message.text()}`);
  tell({ news: message.text() });
});
await Admin.start({ system });
const http = await startAdminHttp({ runtime: system, port: 0, nodes: clusterView(node) });

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= (async () => {
    await http.close();
    await node.stop();
    process.exit(0);
  })();
  return stopping;
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// The parent went away (or asked): no orphan stays behind.
process.on('disconnect', () => void stop());

const workerModule = (supervisor: Ref | null) => behaviourModule(new URL('./worker.ts', import.meta.url), 'worker', supervisor);

/** Node a's part: remote calls, a supervisor here with its worker on b (then c), names and groups. */
async function scenario(b: string, c: string): Promise<void> {
  const helper = (await node.spawn(b, workerModule(null)))!;
  say(`remote call to a worker on ${String(await system.call(helper, ['where']))}: square(7) = ${String(await system.call(helper, ['square', 7]))}`);

  const sup = await Supervisor.start(
    system,
    {
      intensity: 5,
      periodMs: 10_000,
      children: [
        {
          id: 'worker',
          // On the first of b, c that is up: after b dies, the restart lands on c.
          start: ({ parent }) => node.spawn([b, c].find((peer) => node.isConnected(peer)) ?? c, workerModule(parent)),
        },
      ],
    },
    { name: 'sup' },
  );
  Admin.attachRoot(system, ADMIN_NAME, sup);
  const first = (await Supervisor.whichChild(system, sup, 'worker')).ref as Ref;
  say(`supervisor on ${node.name} supervises a worker on ${String(await system.call(first, ['where']))}`);
  await global.register('leader', sup);
  groups.join('supervisors', sup);
  system.spawn({
    init: (ctx) => void ctx.monitor(first),
    handle: (ctx, message) => {
      if (message instanceof DownMessage) say(`monitor: the worker on ${b} went down: ${formatReason(message.reason)}`);
      ctx.stop();
    },
  });
  tell({ phase: 'supervising', worker: String(first) });
}

/** After b was killed: the worker restarted on c. */
async function afterKill(c: string): Promise<void> {
  for (;;) {
    const entry = await Supervisor.whichChild(system, 'sup', 'worker');
    if (entry.ref instanceof Object && (entry.ref as Ref).node === c) {
      say(`the supervisor restarted the worker on ${String(await system.call(entry.ref as Ref, ['where']))}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  topics.publish('cluster:news', Buffer.from(`hello from ${node.name}`));
  tell({ phase: 'restarted' });
}

process.on('message', (message: { cmd: string; args: string[] }) => {
  const run = async (): Promise<void> => {
    switch (message.cmd) {
      case 'connect':
        for (const peer of message.args) await node.connect(peer);
        tell({ connected: node.nodes().length });
        return;
      case 'scenario':
        return scenario(message.args[0]!, message.args[1]!);
      case 'afterKill':
        return afterKill(message.args[0]!);
      case 'whereisLeader':
        tell({ leader: String(global.whereis('leader')), members: groups.members('supervisors').map(String) });
        return;
      case 'stop':
        return stop();
    }
  };
  run().catch((error: unknown) => {
    say(`failed: ${error instanceof Error ? error.stack : String(error)}`);
    tell({ failed: String(error) });
  });
});

tell({ ready: node.name, admin: http.url, pid: process.pid });

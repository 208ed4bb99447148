/**
 * The getting-started app node: a cluster node (`molo/nodes`) that other nodes can call, a SQLite
 * file holding the app's table, the task queue and the scheduler's entries, and on the node's
 * system the application node of `molo/admin`: a supervision tree (the greeter, a task worker
 * pool, the scheduler) and the admin surface with the observer page at `/`, which shows every
 * connected node (the peer's tree through its admin actor).
 * A module of the example, not a program: main.ts runs it.
 */
import { join } from 'node:path';
import { clusterView, startNode as startAppNode, type MoloNode } from 'molo/admin';
import { worker } from 'molo/behaviours';
import { openScheduler, openTaskQueue, schedulerChild, taskWorkersChild, type Scheduler, type SqlTaskQueue } from 'molo/bus';
import { openKv, openSqlite } from 'molo/data';
import { Orm } from 'molo/data/orm';
import { startNode as startClusterNode, type Node } from 'molo/nodes';
import { Greeter } from './greeter.js';
import { guestHandlers } from './handlers.js';
import { Guest } from './model.js';

export interface App {
  readonly cluster: Node;
  readonly node: MoloNode;
  readonly orm: Orm;
  readonly queue: SqlTaskQueue;
  readonly scheduler: Scheduler;
  /** Closes what the tree used (queue, lease store, database) and stops the cluster node; after `node` stopped. */
  close(): Promise<void>;
}

export async function startApp(options: { readonly dir: string; readonly secret: string }): Promise<App> {
  // Port 0: any free port; the node's name carries the real one (app@127.0.0.1:PORT).
  const cluster = await startClusterNode({ name: 'app@127.0.0.1:0', secret: options.secret, system: { logger: { level: 'warn' } } });
  const system = cluster.system;

  // One SQLite file for this small app: its table, the queue's tables and the scheduler's.
  const db = await openSqlite(system, { file: join(options.dir, 'app.db') });
  const orm = new Orm(db);
  await orm.createTables(Guest);
  const queue = await openTaskQueue(db);
  await queue.createQueue('guests', { retry: { baseMs: 200 } });
  const leaseStore = await openKv(db, { table: 'molo_scheduler_lease' });

  const node = await startAppNode({
    system,
    root: {
      strategy: 'one_for_one',
      children: [
        worker('greeter', () => new Greeter(), { server: { name: 'greeter' } }),
        taskWorkersChild('guest-workers', queue, { queue: 'guests', concurrency: 2, pollMs: 100, executor: { placement: 'loop', handlers: guestHandlers(system, orm) } }),
        schedulerChild('scheduler', { queue, leaseStore }),
      ],
    },
    // Port 0 picks a free port (node.adminUrl); `tasks` adds the queue's routes and its panel on the page;
    // `nodes` lists the connected nodes on the page, each with its supervision tree (the peer's too).
    admin: { port: 0, tasks: queue, nodes: clusterView(cluster) },
    // The system is the cluster node's: main.ts stops that after this node, then exits.
    exitProcess: false,
  });
  // A handle on the entries: the supervised actor fires them, this one starts no actor.
  const scheduler = await openScheduler(system, { queue, start: false });

  return {
    cluster,
    node,
    orm,
    queue,
    scheduler,
    async close() {
      await queue.close();
      await leaseStore.close();
      await db.close();
      await cluster.stop();
    },
  };
}

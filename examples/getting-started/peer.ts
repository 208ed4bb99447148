/**
 * The second node of the getting-started example, in an OS process of its own (main.ts forks it):
 * a cluster node with its own greeter, registered as `greeter`, under a supervisor: an application
 * node without HTTP, whose admin actor lets the app node's observer page show this node's tree. It
 * tells the parent its name, and stops when the parent asks, goes away, or on SIGINT / SIGTERM.
 * Started by main.ts (with its Node flags): examples/getting-started/peer.ts
 */
import { startNode as startAppNode } from 'molo/admin';
import { worker } from 'molo/behaviours';
import { startNode } from 'molo/nodes';
import { Greeter } from './greeter.js';

const node = await startNode({
  name: 'peer@127.0.0.1:0',
  secret: process.env['MOLO_CLUSTER_SECRET'] ?? 'getting-started-secret-0123456789',
  system: { logger: { level: 'warn' } },
});
// `admin: false`: the admin actor without an HTTP surface; the app node's page reads this tree through it.
const app = await startAppNode({ system: node.system, root: { children: [worker('greeter', () => new Greeter(), { server: { name: 'greeter' } })] }, admin: false, signals: false });

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= app
    .stop()
    .then(() => node.stop())
    .then(() => process.exit(0));
  return stopping;
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// The parent asked, or went away: no orphan stays behind.
process.on('message', (message) => void (message === 'stop' && stop()));
process.on('disconnect', () => void stop());

process.send?.({ ready: node.name, pid: process.pid });

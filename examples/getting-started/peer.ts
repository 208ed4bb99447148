/**
 * The second node of the getting-started example, in an OS process of its own (main.ts forks it):
 * a cluster node with its own greeter, registered as `greeter`, under a supervisor. It tells the
 * parent its name, and stops when the parent asks, goes away, or on SIGINT / SIGTERM.
 * Started by main.ts (with its Node flags): examples/getting-started/peer.ts
 */
import { Supervisor, worker } from 'molo/behaviours';
import { startNode } from 'molo/nodes';
import { Greeter } from './greeter.js';

const node = await startNode({
  name: 'peer@127.0.0.1:0',
  secret: process.env['MOLO_CLUSTER_SECRET'] ?? 'getting-started-secret-0123456789',
  system: { logger: { level: 'warn' } },
});
await Supervisor.start(node.system, { children: [worker('greeter', () => new Greeter(), { server: { name: 'greeter' } })] }, { name: 'root' });

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= node.stop().then(() => process.exit(0));
  return stopping;
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// The parent asked, or went away: no orphan stays behind.
process.on('message', (message) => void (message === 'stop' && stop()));
process.on('disconnect', () => void stop());

process.send?.({ ready: node.name, pid: process.pid });

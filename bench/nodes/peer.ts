/**
 * The Molo peer of the nodes suite, in its own process: `peer.ts <secret>` starts a node on a free
 * loopback port with `counter` (counts what it receives; calls 'count' and 'reset') and `echo`
 * (replies with the request), prints `ready <node>`, and runs until killed.
 */
import { CallRequest } from '../../src/actors/index.js';
import { startNode } from '../../src/nodes/index.js';

const node = await startNode({ name: 'bench-peer@127.0.0.1:0', secret: process.argv[2]!, system: { logger: false } });
let count = 0;
node.system.spawn(
  (message) => {
    if (!(message instanceof CallRequest)) {
      count++;
      return;
    }
    if (message.request === 'reset') count = 0;
    message.reply(count);
  },
  { name: 'counter', mailbox: { capacity: 4_000_000 } },
);
node.system.spawn((message) => void (message instanceof CallRequest && message.reply(message.request)), { name: 'echo' });
process.stdout.write(`ready ${node.name}\n`);
process.on('SIGINT', () => process.exit(0));

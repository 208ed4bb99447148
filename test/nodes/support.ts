import { DownMessage, ExitMessage, type ExitReason, type Ref } from '../../src/actors/index.js';
import { startNode, type Node, type NodeOptions } from '../../src/nodes/index.js';
import { afterEachTest } from '../support/file-hooks.js';

export const SECRET = 'molo-test-cluster-secret-0123456789';

const started = new Set<Node>();
afterEachTest(async () => {
  await Promise.all([...started].map((node) => node.stop()));
  started.clear();
});

/** A node on loopback (a free port unless `name` is a full node name), stopped after the test. */
export async function testNode(name: string, options: Partial<NodeOptions> = {}): Promise<Node> {
  const full = name.includes('@') ? name : `${name}@127.0.0.1:0`;
  const node = await startNode({ name: full, secret: SECRET, system: { logger: false }, ...options });
  started.add(node);
  return node;
}

/** An actor of `node` that, on 'go', monitors and links `target` (trapping exits), and the reasons of its DOWN and EXIT. */
export function monitorAndLink(node: Node, target: Ref): { actor: Ref; reasons: ExitReason[] } {
  const reasons: ExitReason[] = [];
  const actor = node.system.spawn(
    (message, ctx) => {
      if (message === 'go') {
        ctx.monitor(target);
        ctx.link(target);
      } else if (message instanceof DownMessage || message instanceof ExitMessage) reasons.push(message.reason);
    },
    { trapExit: true },
  );
  return { actor, reasons };
}

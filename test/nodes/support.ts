import { afterEach } from 'vitest';
import { startNode, type Node, type NodeOptions } from '../../src/nodes/index.js';

export const SECRET = 'molo-test-cluster-secret-0123456789';

const started = new Set<Node>();
afterEach(async () => {
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

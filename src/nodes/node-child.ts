/**
 * A cluster node as a child of an application's tree: the child is a keeper actor of the
 * application's system that owns a node (its own ActorSystem, listener and links). Stopped by its
 * supervisor, it stops the node before it exits, so siblings started after it stop first and
 * those before it still run while its links close. If the node's own supervisor gives up or the
 * node is stopped from elsewhere, the keeper exits (`node_stopped`) and the tree's rules start a
 * new node from the same options: the same name if the port is fixed, so peers that keep it
 * connected dial it again. Killed, the keeper's node is stopped, and a restart waits for that stop
 * to free the port.
 */
import { ExitMessage } from '../actors/messages.js';
import type { Ref } from '../actors/ref.js';
import type { ActorRuntime } from '../actors/index.js';
import type { ChildSpec } from '../behaviours/child-spec.js';
import { unknownOptionKey } from '../actors/option-keys.js';
import { InvalidNodeOption } from './errors.js';
import { startNode, type Node } from './node.js';
import type { NodeOptions } from './options.js';

export interface NodeChild extends ChildSpec {
  /** The first node the child started (rejects with the reason its start failed). */
  readonly node: Promise<Node>;
  /** The node running now: a new one after each restart; undefined while none runs. */
  current(): Node | undefined;
}

export function nodeChild(system: ActorRuntime, options: NodeOptions, childOptions: { readonly id?: string } = {}): NodeChild {
  const unknown = unknownOptionKey(childOptions, ['id']);
  if (unknown !== undefined) throw new InvalidNodeOption(`nodeChild.${unknown.key}`, unknown.detail);
  let running: Node | undefined;
  /** The last node's stop: a new node waits for it, so a fixed port is free again. */
  let stopped: Promise<void> = Promise.resolve();
  let settle!: { resolve(node: Node): void; reject(error: unknown): void };
  const first = new Promise<Node>((resolve, reject) => (settle = { resolve, reject }));
  // A caller that never awaits it must not see an unhandled rejection: the tree's start reports the failure.
  first.catch(() => undefined);

  const start = async ({ parent }: { readonly parent: Ref }): Promise<Ref> => {
    // The node of the keeper before (killed or crashed) first frees its port.
    await stopped;
    let node: Node;
    try {
      node = await startNode(options);
    } catch (error) {
      settle.reject(error);
      throw error;
    }
    running = node;
    settle.resolve(node);
    let stopping = false;
    const keeper = system.spawn(
      async (message: unknown, ctx) => {
        if (message instanceof ExitMessage && message.from.id === parent.id && message.from.node === parent.node) {
          stopping = true;
          await node.stop();
          ctx.stop(message.reason);
        } else if (message === NODE_STOPPED && !stopping) {
          ctx.stop('node_stopped');
        }
      },
      { link: parent, trapExit: true },
    );
    // The node's supervisor exits when its system shuts down (a stop from elsewhere) or gives up.
    node.system.watch(node.services, () => {
      if (!stopping && system.isAlive(keeper)) system.send(keeper, NODE_STOPPED);
    });
    void system.exited(keeper).then(() => {
      if (running === node) running = undefined;
      stopped = node.stop();
    });
    return keeper;
  };
  const spec: ChildSpec = { id: childOptions.id ?? 'node', type: 'worker', shutdown: 10_000, start };
  return Object.defineProperties(spec, {
    node: { value: first, enumerable: false },
    current: { value: () => running, enumerable: false },
  }) as NodeChild;
}

const NODE_STOPPED = Symbol('node_stopped');

/**
 * Topics: ephemeral, at-most-once pub/sub in one process — a callback subscriber, an actor
 * subscribed to a pattern, JSON payloads, an unrouted publish, and the broker's counters.
 * Run: npm run example examples/topics.ts
 */
import { ActorSystem } from 'molo/actors';
import { createBroker, isTopicMessage } from 'molo/bus';

const system = new ActorSystem({ node: 'example' });
const broker = createBroker({ system, name: 'example' });
try {
  // A callback subscriber on one channel: called one message at a time, after publish returns.
  const sub = broker.subscribe('orders:created', (message) => {
    const order = message.json<{ id: number; item: string }>();
    console.log(`callback: order ${order.id} (${order.item}) on ${message.channel}`);
  });

  // An actor subscriber on a pattern: `*` is one whole segment. Messages land in its mailbox.
  const auditor = system.spawn((message: unknown) => {
    if (isTopicMessage(message)) console.log(`auditor: ${message.channel} via ${message.pattern}: ${message.text()}`);
  });
  broker.subscribePattern('orders:*', auditor);

  const queued = broker.publishJson('orders:created', { id: 42, item: 'tea' });
  console.log(`published to ${queued} subscription(s)`); // before anyone ran: publish never waits
  broker.publish('orders:shipped', Buffer.from('order 42 left the warehouse'), { contentType: 'text/plain' });
  await system.settle();

  sub.unsubscribe();
  broker.publishJson('orders:created', { id: 43, item: 'coffee' }); // only the auditor now
  const lost = broker.publish('users:signed-up', Buffer.from('nobody listens')); // 0: unrouted, lost
  await system.settle();

  const stats = broker.stats;
  console.log(`lost: ${lost === 0}; published ${stats.published}, unrouted ${stats.unrouted}, dropped ${stats.dropped}`);
} finally {
  broker.close();
  system.shutdown();
}

/**
 * Durable streams: a SQLite stream store in a file of its own, a supervised consumer actor that
 * acks on success and naks with backoff on failure, de-duplicated publishes, and retention.
 * Run: npm run example examples/streams.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem, type Ref } from 'molo/actors';
import { Supervisor } from 'molo/behaviours';
import { openSqliteStreams, StreamConsumer, StreamRetention, type Delivery } from 'molo/bus';

interface Order {
  readonly id: number;
  readonly item: string;
}

const dir = mkdtempSync(join(tmpdir(), 'molo-streams-example-'));
const system = new ActorSystem({ node: 'example' });
const store = await openSqliteStreams(system, { file: join(dir, 'streams.db') }, { pollIntervalMs: 100 });
try {
  await store.createStream('orders', { maxAgeMs: 24 * 3_600_000, maxMsgs: 1_000 });

  const billed: number[] = [];
  const handler = (delivery: Delivery): void => {
    const order = delivery.value<Order>();
    // The first attempt at order 3 fails: it is naked, and comes back with deliveryCount 2.
    if (order.id === 3 && delivery.deliveryCount === 1) throw new Error('payment service busy');
    console.log(`billed order ${order.id} (${order.item}), seq ${delivery.seq}, delivery ${delivery.deliveryCount}`);
    billed.push(order.id);
  };

  const root = await Supervisor.start(system, {
    strategy: 'one_for_one',
    children: [
      StreamConsumer.child('billing', { store, stream: 'orders', consumer: 'billing', backoff: { initialMs: 200 }, handler }),
      StreamRetention.child('retention', { store }),
    ],
  });

  for (const [id, item] of [[1, 'apples'], [2, 'pears'], [3, 'plums'], [4, 'figs']] as const) {
    const ack = await store.publish('orders', { id, item } satisfies Order, { msgId: `order-${id}` });
    console.log(`published order ${id} as seq ${ack.seq}`);
  }
  const again = await store.publish('orders', { id: 2, item: 'pears' }, { msgId: 'order-2' });
  console.log(`order 2 again: duplicate ${again.duplicate}, seq ${again.seq}`);

  while (billed.length < 4) await new Promise((resolve) => setTimeout(resolve, 20));
  while ((await store.consumerInfo('orders', 'billing')).pending > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const info = await store.consumerInfo('orders', 'billing');
  console.log(`consumer billing: ack floor ${info.ackFloor}, pending ${info.pending}, lag ${info.lag}`);
  const [consumer] = await Supervisor.whichChildren(system, root);
  const status = await StreamConsumer.status(system, consumer!.ref as Ref);
  console.log(`status: acked ${status.acked}, failed ${status.failed}`);
  console.log(`stream: last seq ${(await store.streamInfo('orders')).lastSeq}`);
  await Supervisor.stop(system, root);
} finally {
  await store.close();
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
console.log('actors left:', system.actorCount);

/**
 * NATS JetStream as a contender (the `nats` client against 127.0.0.1:4222, MOLO_NATS_URL
 * overrides): a file-storage stream, async publish (PUBLISH_WINDOW acks in flight), a durable pull
 * consumer with explicit acks, pulled with `consume()` (buffer of FETCH_BATCH, the client keeps
 * pulls outstanding: NATS's recommended way for throughput; MOLO_NATS_PULL=fetch pulls with
 * `fetch()` in batches of FETCH_BATCH instead).
 */
import { randomBytes } from 'node:crypto';
import { FETCH_BATCH, PUBLISH_WINDOW, type StreamContender } from './contender.js';

const URL = process.env.MOLO_NATS_URL ?? '127.0.0.1:4222';
/** How the consumer pulls: `consume` (default) or `fetch` (MOLO_NATS_PULL=fetch, to compare). */
const PULL = process.env.MOLO_NATS_PULL === 'fetch' ? 'fetch' : 'consume';

type Nats = typeof import('nats');

export function jetstreamContender(): StreamContender {
  let nats: Nats;
  let nc: Awaited<ReturnType<Nats['connect']>> | undefined;
  let jsm: Awaited<ReturnType<NonNullable<typeof nc>['jetstreamManager']>>;
  let js: ReturnType<NonNullable<typeof nc>['jetstream']>;
  const run = randomBytes(4).toString('hex');
  let round = 0;
  let stream = '';
  const streams: string[] = [];

  const subject = (): string => `${stream}.m`;

  const publishLoop = async (n: number, payload: Buffer): Promise<void> => {
    let inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      inFlight.push(js.publish(subject(), payload));
      if (inFlight.length >= PUBLISH_WINDOW) {
        await Promise.all(inFlight);
        inFlight = [];
      }
    }
    await Promise.all(inFlight);
  };

  /** `fetch()`: one pull request per batch, waited out before the next. */
  const fetchLoop = async (n: number): Promise<number> => {
    const consumer = await js.consumers.get(stream, 'c');
    let seen = 0;
    while (seen < n) {
      const batch = await consumer.fetch({ max_messages: Math.min(FETCH_BATCH, n - seen), expires: 1_000 });
      for await (const message of batch) {
        message.ack();
        seen++;
      }
    }
    // Acks are fire-and-forget: flush so the server has them all before the clock stops.
    await nc!.flush();
    return seen;
  };

  /** `consume()`: the client keeps pull requests outstanding as its buffer drains (what NATS recommends for throughput). */
  const consumeLoop = async (n: number): Promise<number> => {
    const consumer = await js.consumers.get(stream, 'c');
    let seen = 0;
    const messages = await consumer.consume({ max_messages: FETCH_BATCH });
    for await (const message of messages) {
      message.ack();
      if (++seen >= n) break;
    }
    // (`close()` after leaving the loop never resolves in nats 2.29: stop() ends the pulls.)
    messages.stop();
    await nc!.flush();
    return seen;
  };
  const pull = PULL === 'fetch' ? fetchLoop : consumeLoop;

  return {
    impl: 'jetstream',
    async open() {
      nats = await import('nats');
      nc = await nats.connect({ servers: URL, timeout: 2_000 });
      jsm = await nc.jetstreamManager();
      js = nc.jetstream();
    },
    async reset() {
      stream = `molo_bench_${run}_${++round}`;
      streams.push(stream);
      await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], storage: nats.StorageType.File, retention: nats.RetentionPolicy.Limits });
      await jsm.consumers.add(stream, { durable_name: 'c', ack_policy: nats.AckPolicy.Explicit, max_ack_pending: 100_000 });
    },
    publish: publishLoop,
    consume: pull,
    async endToEnd(n, payload) {
      const [, seen] = await Promise.all([publishLoop(n, payload), pull(n)]);
      return seen;
    },
    async retainedBytes() {
      const info = await jsm.streams.info(stream);
      return { bytes: info.state.bytes, where: 'disk (file store, stream state bytes)' };
    },
    async close() {
      if (nc === undefined) return;
      for (const name of streams) await jsm.streams.delete(name).catch(() => undefined);
      await nc.close();
    },
  };
}

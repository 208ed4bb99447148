/**
 * Topic fan-out (issue 6 §5): 10,000 messages of 64 bytes published to one channel with 100
 * subscribers, so 1,000,000 deliveries a run; ops/s counts deliveries. The publisher yields to the
 * event loop after every 1,000 messages (Molo's queues hold 1,024 per subscriber), and a run ends
 * when every subscriber has received every message.
 *
 * - topic_fanout: Molo's broker with callback subscribers, Node's EventEmitter with 100 listeners,
 *   and Redis pub/sub through ioredis (one publisher and 100 subscriber connections to the local
 *   server at MOLO_REDIS_HOST:MOLO_REDIS_PORT, default 127.0.0.1:6379). Targets: Molo ≥ 0.5× EventEmitter and ≥ 5× ioredis.
 * - topic_fanout_actors: the same through 100 subscriber actors (informational, no peer); the
 *   publisher waits after each batch until the actors have it, since actors that fall behind a
 *   publisher lose their oldest messages by design.
 *
 * `topicsCases()` returns the rows; the `kv` suite registers them (bench/run.ts is not touched here).
 */
import { EventEmitter } from 'node:events';
import { ActorSystem } from '../src/actors/index.js';
import { createBroker, type Broker } from '../src/bus/index.js';
import { REDIS_HOST, REDIS_PORT } from './kv/redis.js';
import { measureCase, type Absent, type CaseSpec, type Contender } from './data/rounds.js';
import type { Row } from './suite.js';

export const TOPIC_CASES = ['topic_fanout', 'topic_fanout_actors'] as const;

const SUBSCRIBERS = 100;
const BATCH = 1_000;
const CHANNEL = 'bench:fanout';
const PAYLOAD = Buffer.alloc(64, 7);
const REDIS = { host: REDIS_HOST, port: REDIS_PORT };
const WAIT_LIMIT_MS = 60_000;

/** Molo ÷ peer targets for topic_fanout. */
export const TOPIC_TARGETS: Readonly<Record<string, number>> = { eventemitter: 0.5, ioredis: 5 };

export interface TopicsOptions {
  readonly quick?: boolean;
  /** Only these cases (names from {@link TOPIC_CASES}); default all. */
  readonly cases?: readonly string[];
}

const SIZES = {
  full: { messages: 10_000, warmupMessages: 2_000, rounds: 5 },
  quick: { messages: 1_000, warmupMessages: 200, rounds: 1 },
} as const;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Yields to the event loop until `done()`; fails after {@link WAIT_LIMIT_MS}. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not every delivery arrived within ${WAIT_LIMIT_MS / 1_000} s`);
    await nextTurn();
  }
}

/** Publishes `messages` in batches of {@link BATCH}, yielding (and optionally waiting) after each. */
async function publishInBatches(messages: number, publish: () => unknown, afterBatch: (sent: number) => Promise<void> = nextTurn): Promise<void> {
  for (let sent = 0; sent < messages; ) {
    const end = Math.min(sent + BATCH, messages);
    for (; sent < end; sent++) publish();
    await afterBatch(sent);
  }
}

function moloCallbacks(): Contender {
  let broker: Broker | undefined;
  let received = 0;
  return {
    impl: 'molo',
    open: async () => {
      broker = createBroker({ name: 'bench' });
      for (let i = 0; i < SUBSCRIBERS; i++) broker.subscribe(CHANNEL, () => void received++);
    },
    run: async (n) => {
      received = 0;
      const b = broker!;
      await publishInBatches(n / SUBSCRIBERS, () => b.publish(CHANNEL, PAYLOAD));
      await until(() => received >= n, 'molo');
      if (b.stats.dropped > 0) throw new Error(`${b.stats.dropped} messages dropped`);
      return received;
    },
    close: async () => broker?.close(),
  };
}

function eventEmitter(): Contender {
  const emitter = new EventEmitter();
  let received = 0;
  return {
    impl: 'eventemitter',
    open: async () => {
      emitter.setMaxListeners(SUBSCRIBERS + 1);
      for (let i = 0; i < SUBSCRIBERS; i++) emitter.on(CHANNEL, () => void received++);
    },
    run: async (n) => {
      received = 0;
      await publishInBatches(n / SUBSCRIBERS, () => emitter.emit(CHANNEL, PAYLOAD));
      await until(() => received >= n, 'eventemitter');
      return received;
    },
    close: async () => void emitter.removeAllListeners(),
  };
}

interface RedisClient {
  connect(): Promise<void>;
  subscribe(channel: string): Promise<unknown>;
  publish(channel: string, message: Buffer): Promise<number>;
  on(event: 'messageBuffer', listener: (channel: Buffer, message: Buffer) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}
type RedisConstructor = new (options: Record<string, unknown>) => RedisClient;

/** ioredis is loaded when the case runs: without it (or without a server) its row says why. */
async function ioredis(): Promise<Contender | Absent> {
  let Redis: RedisConstructor;
  try {
    Redis = ((await import('ioredis')) as unknown as { default: RedisConstructor }).default;
  } catch (error) {
    return { impl: 'ioredis', unavailable: `ioredis not installed: ${(error as Error).message}` };
  }
  const clients: RedisClient[] = [];
  const client = (): RedisClient => {
    // Fail fast rather than retry: an absent server makes the row unavailable, not the run hang.
    const redis = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
    clients.push(redis);
    return redis;
  };
  const publisher = client();
  try {
    await publisher.connect();
  } catch (error) {
    publisher.disconnect();
    return { impl: 'ioredis', unavailable: `redis unavailable at ${REDIS.host}:${REDIS.port}: ${(error as Error).message}` };
  }
  let received = 0;
  return {
    impl: 'ioredis',
    open: async () => {
      for (let i = 0; i < SUBSCRIBERS; i++) {
        const subscriber = client();
        await subscriber.connect();
        subscriber.on('messageBuffer', () => void received++);
        await subscriber.subscribe(CHANNEL);
      }
    },
    run: async (n) => {
      received = 0;
      let pending: Promise<number>[] = [];
      await publishInBatches(
        n / SUBSCRIBERS,
        () => pending.push(publisher.publish(CHANNEL, PAYLOAD)),
        async () => {
          const batch = pending;
          pending = [];
          await Promise.all(batch);
        },
      );
      await until(() => received >= n, 'ioredis');
      return received;
    },
    close: async () => {
      await Promise.all(clients.map((redis) => redis.quit().catch(() => redis.disconnect())));
    },
  };
}

function moloActors(): Contender {
  let system: ActorSystem | undefined;
  let broker: Broker | undefined;
  let received = 0;
  return {
    impl: 'molo',
    open: async () => {
      system = new ActorSystem({ node: 'bench-topics' });
      broker = createBroker({ name: 'bench-actors', system });
      for (let i = 0; i < SUBSCRIBERS; i++) broker.subscribe(CHANNEL, system.spawn(() => void received++));
    },
    run: async (n) => {
      received = 0;
      const b = broker!;
      await publishInBatches(
        n / SUBSCRIBERS,
        () => b.publish(CHANNEL, PAYLOAD),
        (sent) => until(() => received >= sent * SUBSCRIBERS, 'molo actors'),
      );
      if (b.stats.dropped > 0) throw new Error(`${b.stats.dropped} messages dropped`);
      return received;
    },
    close: async () => {
      broker?.close();
      system?.shutdown();
    },
  };
}

/** Molo ÷ each peer, with the targets; one `impl: 'ratio'` row. */
function ratioRow(rows: readonly Row[]): Row {
  const ops = (impl: string): number | undefined => {
    const value = rows.find((row) => row.case === 'topic_fanout' && row.impl === impl)?.ops_per_s;
    return typeof value === 'number' && value > 0 ? value : undefined;
  };
  const molo = ops('molo');
  const summary: Record<string, unknown> = { case: 'topic_fanout', impl: 'ratio', ops_per_s: null };
  let met: boolean | null = true;
  for (const [peer, target] of Object.entries(TOPIC_TARGETS)) {
    const other = ops(peer);
    const ratio = molo !== undefined && other !== undefined ? Number((molo / other).toFixed(3)) : null;
    summary[`vs_${peer}`] = ratio;
    summary[`target_vs_${peer}`] = `>= ${target}`;
    if (ratio === null) met = met === false ? false : null;
    else if (ratio < target) met = false;
  }
  summary.target_met = met;
  return summary as unknown as Row;
}

/**
 * Runs the topic cases (each implementation warmed up, then timed in interleaved rounds, the median
 * round counted, as bench/data/rounds.ts does) and returns their rows plus a ratio row for topic_fanout.
 */
export async function topicsCases(options: TopicsOptions = {}): Promise<Row[]> {
  const sizes = options.quick === true ? SIZES.quick : SIZES.full;
  const mode = options.quick === true ? 'quick' : 'full';
  const selected = options.cases ?? TOPIC_CASES;
  const spec = (name: string, contenders: readonly (Contender | Absent)[]): CaseSpec => ({
    name,
    unit: 'deliveries',
    n: sizes.messages * SUBSCRIBERS,
    warmupN: sizes.warmupMessages * SUBSCRIBERS,
    rounds: sizes.rounds,
    expected: (n) => n,
    contenders,
  });
  const rows: Row[] = [];
  if (selected.includes('topic_fanout')) {
    rows.push(...(await measureCase(spec('topic_fanout', [moloCallbacks(), eventEmitter(), await ioredis()]), mode)).rows);
    rows.push(ratioRow(rows));
  }
  if (selected.includes('topic_fanout_actors')) {
    rows.push(...(await measureCase(spec('topic_fanout_actors', [moloActors()]), mode)).rows);
  }
  return rows;
}

/**
 * The `rooms` suite: broadcasting to a room across two instances. Each system (bench/rooms/systems.ts)
 * runs as two servers in this process, A and B, with real clients (also in this process) connected
 * to one or the other; every broadcast is one server-side call on A. Cases:
 * - `fanout`: N clients, half on A and half on B, all in one room. A burst of M broadcasts from A,
 *   timed from the first call until every client has received every message: deliveries/s (N × M ÷
 *   that time), the median round. Then a steady, moderate rate (its share of a few seconds per
 *   round): each delivery's latency from the broadcast call to the client's handler, p50 and p99.
 * - `cross_instance_latency`: one client on B; A broadcasts, waits until the client has the message,
 *   then the next: round trips/s (median round), and each one's latency (p50, p99).
 * Rounds are interleaved across systems (see measureAll).
 * Every figure is printed with what the system promised about the broadcast (durable or not).
 */
import { loadavg } from 'node:os';
import { withBenchPostgres, type BenchServer } from '../data/server.js';
import { postgresDurability, redisDurability } from '../tasks/durability.js';
import { benchLog, formatTable, messageOf, ratioLines, ratioRow, roundFields, spreadCell, suiteHeader, ROUNDS_NOTE, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import { moloRooms, socketIoMolo, socketIoPostgres, socketIoRedis, type Payload, type RoomsSystem, type Settings, type Side } from './systems.js';

const CASES = ['fanout', 'cross_instance_latency'] as const;
const SIZES = {
  full: { clients: 200, messages: 1_000, rounds: 5, steadyRate: 50, steadySeconds: 5, pings: 500, timeoutMs: 120_000 },
  quick: { clients: 4, messages: 50, rounds: 1, steadyRate: 50, steadySeconds: 0.2, pings: 10, timeoutMs: 10_000 },
} as const;
type Sizes = (typeof SIZES)[keyof typeof SIZES];

const MOLOS = ['molo-postgres', 'molo-nats', 'molo-node', 'molo-socketio'];
const PEERS = ['socketio-redis', 'socketio-postgres'];
const PAD = 'x'.repeat(100);
const log = benchLog;

function percentile(values: readonly number[], p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Counts the deliveries of the current round (stragglers of an earlier one are not counted). */
class Deliveries {
  round = 0;
  count = 0;
  latencies: number[] | undefined;
  readonly perClient: number[];
  #target = Infinity;
  #done: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(clients: number) {
    this.perClient = new Array<number>(clients).fill(0);
  }

  readonly onMessage = (client: number, data: Payload): void => {
    if (data.r !== this.round) return;
    this.count++;
    this.perClient[client]!++;
    this.latencies?.push(performance.now() - data.t);
    if (this.count >= this.#target) this.#done?.();
  };

  /** Starts a round; resolves when `target` deliveries of it have arrived (rejects after `timeoutMs`). */
  next(target: number, timeoutMs: number, latencies = false): Promise<void> {
    // A round left unsettled (the warm-up's) is dropped: its promise never settles, its timer goes.
    this.stop();
    this.round++;
    this.count = 0;
    this.perClient.fill(0);
    this.latencies = latencies ? [] : undefined;
    this.#target = target;
    return new Promise<void>((resolve, reject) => {
      this.#timer = setTimeout(() => reject(new Error(`${this.count}/${target} deliveries after ${timeoutMs} ms`)), timeoutMs);
      this.#done = () => {
        this.stop();
        resolve();
      };
    });
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#done = undefined;
  }
}

const payload = (r: number, i: number): Payload => ({ r, i, t: performance.now(), p: PAD });

/** Broadcasts until every client has one (subscriptions and bridges are up), then a burst that all must get. */
async function warmUp(system: RoomsSystem, deliveries: Deliveries, clients: number, sizes: Sizes): Promise<void> {
  const deadline = Date.now() + sizes.timeoutMs;
  for (;;) {
    void deliveries.next(Infinity, sizes.timeoutMs).catch(() => undefined);
    await system.broadcast(payload(deliveries.round, 0));
    // Up to 200 ms for this one to reach everyone, then another.
    for (let waited = 0; waited < 200 && !deliveries.perClient.every((n) => n > 0); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    if (deliveries.perClient.every((n) => n > 0)) break;
    if (Date.now() > deadline) throw new Error(`warm-up: ${deliveries.perClient.filter((n) => n > 0).length}/${clients} clients reached`);
  }
  const burst = Math.min(100, sizes.messages);
  await burstRound(system, deliveries, clients, burst, sizes.timeoutMs);
}

/** M broadcasts from A as fast as the API takes them; the time until all N × M deliveries arrived. */
async function burstRound(system: RoomsSystem, deliveries: Deliveries, clients: number, messages: number, timeoutMs: number): Promise<number> {
  const all = deliveries.next(clients * messages, timeoutMs);
  const started = performance.now();
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < messages; i++) {
    const call = system.broadcast(payload(deliveries.round, i));
    if (call !== undefined) calls.push(call);
  }
  await Promise.all([all, Promise.all(calls)]);
  return (performance.now() - started) / 1_000;
}

/** `rate` broadcasts/s (ticks of 10 ms) for `seconds`; each delivery's latency. */
async function steady(system: RoomsSystem, deliveries: Deliveries, clients: number, rate: number, seconds: number, timeoutMs: number): Promise<{ latencies: number[]; messages: number }> {
  const perTick = Math.max(1, Math.round(rate / 100));
  const ticks = Math.round((seconds * rate) / perTick);
  const messages = ticks * perTick;
  const all = deliveries.next(clients * messages, timeoutMs + seconds * 1_000, true);
  const latencies = deliveries.latencies!;
  const calls: Promise<unknown>[] = [];
  const started = performance.now();
  for (let tick = 0, i = 0; tick < ticks; tick++) {
    for (let k = 0; k < perTick; k++) {
      const call = system.broadcast(payload(deliveries.round, i++));
      if (call !== undefined) calls.push(call);
    }
    const wait = started + (tick + 1) * (1_000 / (rate / perTick)) - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await Promise.all([all, Promise.all(calls)]);
  return { latencies, messages };
}

/** What one system gathers over the rounds of one case. */
interface Tally {
  readonly rates: number[];
  readonly latencies: number[];
  steadyMessages: number;
  error: string | undefined;
}

const tally = (): Tally => ({ rates: [], latencies: [], steadyMessages: 0, error: undefined });

/** One round of `fanout`: a burst (deliveries/s), then its share of the steady run's latencies. */
async function fanoutRound(system: RoomsSystem, sizes: Sizes, into: Tally): Promise<void> {
  const n = sizes.clients;
  const sides: Side[] = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'a' : 'b'));
  const deliveries = new Deliveries(n);
  await system.connect(sides, deliveries.onMessage);
  try {
    await warmUp(system, deliveries, n, sizes);
    const seconds = await burstRound(system, deliveries, n, sizes.messages, sizes.timeoutMs);
    into.rates.push((n * sizes.messages) / seconds);
    const { latencies, messages } = await steady(system, deliveries, n, sizes.steadyRate, sizes.steadySeconds / sizes.rounds, sizes.timeoutMs);
    into.latencies.push(...latencies);
    into.steadyMessages += messages;
    log(`${system.impl}: fanout ${Math.round(into.rates.at(-1)!).toLocaleString('en-US')} deliveries/s, steady p50 ${percentile(latencies, 50).toFixed(1)} ms (load ${loadavg()[0]!.toFixed(1)})`);
  } finally {
    deliveries.stop();
    await system.disconnect();
  }
}

/** One round of `cross_instance_latency`: its share of the pings, one at a time from A to a client on B. */
async function crossRound(system: RoomsSystem, sizes: Sizes, into: Tally): Promise<void> {
  const deliveries = new Deliveries(1);
  await system.connect(['b'], deliveries.onMessage);
  try {
    await warmUp(system, deliveries, 1, sizes);
    const pings = Math.ceil(sizes.pings / sizes.rounds);
    const started = performance.now();
    for (let i = 0; i < pings; i++) {
      const got = deliveries.next(1, sizes.timeoutMs);
      const sent = payload(deliveries.round, i);
      await Promise.all([got, system.broadcast(sent)]);
      into.latencies.push(performance.now() - sent.t);
    }
    into.rates.push(pings / ((performance.now() - started) / 1_000));
    log(`${system.impl}: cross_instance_latency ${Math.round(into.rates.at(-1)!).toLocaleString('en-US')} round trips/s (load ${loadavg()[0]!.toFixed(1)})`);
  } finally {
    deliveries.stop();
    await system.disconnect();
  }
}

async function settingsOf(pg: BenchServer | undefined): Promise<Settings> {
  return {
    postgres: pg === undefined ? 'postgres: not running' : await postgresDurability(pg),
    redis: await redisDurability(),
  };
}

/**
 * Rounds interleaved across systems: each round opens every system in turn (fresh servers,
 * connections and clients), runs its share of each case, and closes it, so a machine whose load
 * changes during the run weighs on every system alike. A system that cannot open on the first
 * round is unavailable (its rows say why); a case that fails keeps its error and runs no more.
 */
async function measureAll(systems: readonly RoomsSystem[], cases: readonly string[], sizes: Sizes, mode: string): Promise<{ rows: Row[]; failed: boolean }> {
  const tallies = new Map(systems.map((system) => [system.impl, new Map(cases.map((name) => [name, tally()]))]));
  const unavailable = new Map<string, string>();
  let failed = false;
  for (let round = 0; round < sizes.rounds; round++) {
    log(`round ${round + 1} of ${sizes.rounds}`);
    for (const system of systems) {
      if (unavailable.has(system.impl)) continue;
      try {
        if (round === 0) log(`${system.impl}: ${system.what}`);
        try {
          await system.open();
        } catch (error) {
          if (round > 0) throw error;
          const why = `${system.impl} unavailable: ${messageOf(error)}`;
          log(why);
          unavailable.set(system.impl, why);
          continue;
        }
        for (const name of cases) {
          const into = tallies.get(system.impl)!.get(name)!;
          if (into.error !== undefined) continue;
          try {
            await (name === 'fanout' ? fanoutRound(system, sizes, into) : crossRound(system, sizes, into));
          } catch (error) {
            failed = true;
            into.error = messageOf(error);
            log(`${system.impl} ${name} FAILED: ${into.error}`);
          }
        }
      } catch (error) {
        failed = true;
        for (const into of tallies.get(system.impl)!.values()) into.error ??= `open failed on round ${round + 1}: ${messageOf(error)}`;
        log(`${system.impl} FAILED: ${messageOf(error)}`);
      } finally {
        await system.close().catch((error: unknown) => log(`${system.impl} close failed: ${messageOf(error)}`));
      }
    }
  }
  const rows: Row[] = [];
  for (const name of cases) {
    for (const system of systems) {
      const why = unavailable.get(system.impl);
      const into = tallies.get(system.impl)!.get(name)!;
      if (why !== undefined) rows.push({ case: name, impl: system.impl, ops_per_s: null, unavailable: why, mode });
      else if (into.error !== undefined || into.rates.length === 0) rows.push({ case: name, impl: system.impl, ops_per_s: null, error: into.error ?? 'no rounds', durability: system.durability, mode });
      else {
        const fields = roundFields(into.rates);
        const latency = { p50_ms: Number(percentile(into.latencies, 50).toFixed(2)), p99_ms: Number(percentile(into.latencies, 99).toFixed(2)) };
        rows.push(
          name === 'fanout'
            ? {
                case: name,
                impl: system.impl,
                ...fields,
                clients: sizes.clients,
                messages: sizes.messages,
                msgs_per_s: Math.round(fields.ops_per_s / sizes.clients),
                steady_rate_msgs_per_s: sizes.steadyRate,
                steady_messages: into.steadyMessages,
                steady_deliveries: into.latencies.length,
                ...latency,
                durability: system.durability,
                mode,
              }
            : { case: name, impl: system.impl, ...fields, messages: into.latencies.length, ...latency, durability: system.durability, mode },
        );
      }
    }
  }
  return { rows, failed };
}

function report(rows: readonly Row[], ratioRows: readonly Row[], sizes: Sizes): string {
  const integer = (value: unknown): string => (typeof value === 'number' ? Math.round(value).toLocaleString('en-US') : '');
  const ms = (value: unknown): string => (typeof value === 'number' ? value.toFixed(1) : '');
  const table = formatTable(
    ['case', 'impl', 'clients', 'deliveries/s', 'spread', 'p50 ms', 'p99 ms', 'durability'],
    rows.map((row) => [
      row.case,
      row.impl,
      row.case === 'fanout' ? integer(row.clients ?? sizes.clients) : '1',
      integer(row.ops_per_s),
      spreadCell(row),
      ms(row.p50_ms),
      ms(row.p99_ms),
      typeof row.unavailable === 'string' ? row.unavailable : typeof row.error === 'string' ? `FAILED: ${row.error}` : String(row.durability ?? ''),
    ]),
  );
  return [
    table,
    '',
    `fanout: deliveries/s of a burst of ${sizes.messages.toLocaleString('en-US')} broadcasts to ${sizes.clients} clients (half per instance), until the last client has the last one;`,
    `  p50/p99: broadcast call → client handler at a steady ${sizes.steadyRate} broadcasts/s, ${sizes.steadySeconds} s in all. ${ROUNDS_NOTE}`,
    `cross_instance_latency: round trips/s of one broadcast at a time from A to one client on B (${sizes.pings} in all); p50/p99 of each.`,
    `${sizes.rounds} round(s), interleaved: each round opens every system in turn (fresh servers, clients, warm-up) and closes it.`,
    '',
    'Ratios (Molo ÷ peer, deliveries/s or round trips/s, higher is better):',
    ...ratioLines(ratioRows, 22),
  ].join('\n');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const sizes = SIZES[mode];
  const cases = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`rooms suite (${mode}): ${cases.join(', ')}; ${sizes.clients} clients, bursts of ${sizes.messages} broadcasts`);
  const rows: Row[] = [];
  let failed = false;
  await withBenchPostgres('bench-rooms', async (_system, pg) => {
    const settings = await settingsOf(pg);
    log(`durability: ${settings.postgres}; ${settings.redis}`);
    // sendQueueMax: a burst must fit a client's queue (see moloRooms).
    const queue = Math.max(1_000, sizes.messages * 2);
    const systems = [
      moloRooms('postgres', pg, settings, queue),
      moloRooms('nats', pg, settings, queue),
      moloRooms('node', pg, settings, queue),
      socketIoMolo(pg, settings),
      socketIoRedis(settings),
      socketIoPostgres(pg, settings),
    ];
    const outcome = await measureAll(systems, cases, sizes, mode);
    rows.push(...outcome.rows);
    failed = outcome.failed;
  });
  const ratioRows = cases.map((name) => ratioRow(rows, name, MOLOS, PEERS));
  const header = suiteHeader('rooms', options.quick, 'Postgres, Redis and nats-server -js', loadBefore, [
    'Two instances (A and B) per system, both in this process, and the clients in it too (clients cost CPU here, as the servers do).',
    'Molo rooms: defaults but sendQueueMax (raised to fit a burst); Socket.IO: websocket transport, one connection per client, no connection-state recovery.',
  ]);
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows, sizes)].join('\n'), failed };
}

export const roomsSuite: Suite = {
  name: 'rooms',
  description: 'broadcast to a room across two instances: Molo rooms (Postgres, NATS, node bus) and its Socket.IO adapter vs Socket.IO with the Redis and Postgres adapters',
  cases: CASES,
  run,
};

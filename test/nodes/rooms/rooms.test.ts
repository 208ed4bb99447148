/**
 * Rooms across two instances sharing only a Postgres database (the Postgres bus), with real `ws`
 * clients: broadcast once and delivered once everywhere, all-but-sender, to one socket on another
 * instance, catch-up on reconnect to the other instance, a typed gap past retention, presence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { Client, instance, type BusKind, type Instance } from './support.js';
import { dropNatsStreams } from './support.js';

let fresh: FreshDatabase;
const running: Instance[] = [];
const clients: Client[] = [];
beforeAll(() => {
  fresh = freshDatabase('rooms');
});
afterAll(async () => {
  fresh.drop();
  await dropNatsStreams();
});
/** Instances stop inside the test (the leak check runs before a file's afterEach). */
async function cleanup(): Promise<void> {
  for (const client of clients.splice(0)) await client.close();
  for (const one of running.splice(0)) await one.stop();
}
function scenario(name: string, body: () => Promise<void>, timeout = 20_000): void {
  it(name, { timeout }, async () => {
    try {
      await body();
    } finally {
      await cleanup();
    }
  });
}

let busKind: BusKind = 'postgres';
async function start(name: string, options: Parameters<typeof instance>[2] = {}): Promise<Instance> {
  const one = await instance(fresh, `${name}${busKind[0]}`, { busKind, ...options });
  running.push(one);
  return one;
}
async function connect(one: Instance, headers?: Record<string, string>): Promise<Client> {
  const client = await Client.connect(one.rooms.port, headers);
  clients.push(client);
  return client;
}

// The same scenarios on each bus implementation.
describe.each(['postgres', 'nats', 'node'] as const)('rooms on the %s bus', (kind) => {
  beforeAll(() => {
    busKind = kind;
  });

  scenario('a broadcast is published once and every socket on both instances gets it once, in order', async () => {
    const [a, b] = [await start('a1'), await start('b1')];
    const sockets = [await connect(a), await connect(a), await connect(b), await connect(b)];
    for (const socket of sockets) expect((await socket.join('lobby')).t).toBe('joined');
    for (let i = 0; i < 20; i++) await (i % 2 === 0 ? a : b).rooms.broadcast('lobby', { i });
    for (const socket of sockets) await socket.waitCount('lobby', 20);
    await sleep(300);
    for (const socket of sockets) {
      expect(socket.msgs('lobby').map((f) => (f.data as { i: number }).i)).toEqual([...Array(20).keys()]);
      const seqs = socket.msgs('lobby').map((f) => f.seq!);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    expect(await a.bus.lastSeq('room.lobby')).toBe(20);
  });

  scenario('all but the sender, and one socket on another instance', async () => {
    const [a, b] = [await start('a2'), await start('b2')];
    const [x, y] = [await connect(a), await connect(b)];
    await x.join('r');
    await y.join('r');
    x.send({ t: 'publish', room: 'r', data: 'from x' });
    await y.waitCount('r', 1);
    await a.rooms.broadcast('r', 'to all');
    await x.waitCount('r', 1);
    expect(x.msgs('r').map((f) => f.data)).toEqual(['to all']);
    await a.rooms.sendTo(y.socket, 'just you');
    expect((await y.wait((f) => f.t === 'direct')).data).toBe('just you');
    await sleep(200);
    expect(x.frames.some((f) => f.t === 'direct')).toBe(false);
  });

  scenario('a socket that reconnects to the other instance with its last seq catches up with no gap and no duplicate', async () => {
    const [a, b] = [await start('a3'), await start('b3')];
    const first = await connect(a);
    await first.join('chat');
    for (let i = 0; i < 5; i++) await b.rooms.broadcast('chat', i);
    await first.waitCount('chat', 5);
    const last = first.last('chat');
    await first.close();
    for (let i = 5; i < 12; i++) await a.rooms.broadcast('chat', i);
    const again = await connect(b);
    expect((await again.join('chat', last)).seq).toBe(last);
    for (let i = 12; i < 15; i++) await a.rooms.broadcast('chat', i);
    await again.waitCount('chat', 10);
    await sleep(300);
    expect([...first.msgs('chat'), ...again.msgs('chat')].map((f) => f.data)).toEqual([...Array(15).keys()]);
    expect(again.frames.some((f) => f.t === 'gap')).toBe(false);
  });

  scenario('a crashed room bridge is restarted by its supervisor and resumes where its members are: no loss, no duplicate', async () => {
    const [a, b] = [await start('a6'), await start('b6')];
    const x = await connect(a);
    await x.join('crash');
    await b.rooms.broadcast('crash', 0);
    await x.waitCount('crash', 1);
    const [bridge] = await Supervisor.whichChildren(a.system, a.rooms.bridgeSupervisor);
    // `kill`: the bridge traps exits (for its terminate), so only an untrappable exit crashes it.
    a.system.exit(bridge!.ref as Ref, 'kill');
    for (let i = 1; i < 6; i++) await b.rooms.broadcast('crash', i);
    await x.waitCount('crash', 6);
    await sleep(300);
    expect(x.msgs('crash').map((f) => f.data)).toEqual([0, 1, 2, 3, 4, 5]);
    const [again] = await Supervisor.whichChildren(a.system, a.rooms.bridgeSupervisor);
    expect(again!.ref).not.toEqual(bridge!.ref);
  });

  scenario('past retention the reconnect gets a typed gap, then the retained rest', async () => {
    const a = await start('a4', { retention: { maxMsgs: 5 } });
    for (let i = 0; i < 12; i++) await a.rooms.broadcast('old', i);
    await a.retain();
    const client = await connect(a);
    await client.join('old', 2);
    await client.waitCount('old', 5);
    expect(client.frames.find((f) => f.t === 'gap')).toMatchObject({ room: 'old', from: 3, to: 7, reason: 'retention' });
    expect(client.msgs('old').map((f) => f.seq)).toEqual([8, 9, 10, 11, 12]);
  });

  scenario('presence across instances; entries nobody renews are swept and their leaves published', async () => {
    const [a, b] = [await start('a5', { presenceTtlMs: 1_000 }), await start('b5', { presenceTtlMs: 1_000 })];
    const [x, y] = [await connect(a), await connect(b)];
    await x.join('p');
    await y.join('p');
    await x.wait((f) => f.t === 'presence' && f.event === 'join' && f.socket === y.socket);
    expect((await a.rooms.presence('p')).map((e) => e.instance).sort()).toEqual([`a5${kind[0]}`, `b5${kind[0]}`]);
    // An instance that died without leaving (its rows, nobody renewing them; the SIGKILL case is the HAProxy test's).
    await a.db.query(`INSERT INTO molo_room_presence VALUES ('p', 'ghost-1', 'ghost', '{}', $1::int8)`, [Date.now() + 500]);
    expect((await a.rooms.presence('p')).map((e) => e.instance).sort()).toEqual([`a5${kind[0]}`, `b5${kind[0]}`, 'ghost']);
    await x.wait((f) => f.t === 'presence' && f.event === 'leave' && f.socket === 'ghost-1', 5_000);
    await y.wait((f) => f.t === 'presence' && f.event === 'leave' && f.socket === 'ghost-1', 5_000);
    expect((await a.rooms.presence('p')).map((e) => e.instance).sort()).toEqual([`a5${kind[0]}`, `b5${kind[0]}`]);
    // A socket that goes is a leave event too.
    await y.close();
    await x.wait((f) => f.t === 'presence' && f.event === 'leave' && f.socket === y.socket);
    expect((await a.rooms.presence('p')).map((e) => e.instance)).toEqual([`a5${kind[0]}`]);
  });
});

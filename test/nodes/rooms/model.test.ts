/**
 * A fast-check model of rooms across three instances on one bus (Postgres, then NATS JetStream): random joins,
 * broadcasts from any instance, disconnects, reconnects (with the last seq seen, to any instance)
 * and retention passes. Every client must receive exactly the room's sequence from its first join
 * point, in order and without duplicates, across all its connections, with a gap only for a range
 * past retention, and every such gap reported.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { Client, instance, type Frame, type Instance } from './support.js';
import { dropNatsStreams } from './support.js';

const KEEP = 5;
let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('rooms_model');
});
afterAll(async () => {
  fresh.drop();
  await dropNatsStreams();
});

type Step =
  | { readonly kind: 'connect'; readonly client: number; readonly at: number }
  | { readonly kind: 'drop'; readonly client: number }
  | { readonly kind: 'broadcast'; readonly at: number }
  | { readonly kind: 'retain' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('connect' as const), client: fc.nat(2), at: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), client: fc.nat(2) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('broadcast' as const), at: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'retain' as const }) },
);

interface ModelClient {
  conn: Client | undefined;
  /** Frames of this room from all its connections, in order. */
  readonly history: Frame[];
  joinedAt: number | undefined;
}

function lastOf(model: ModelClient, room: string): number {
  let last = model.joinedAt ?? 0;
  for (const f of [...model.history, ...(model.conn?.frames ?? [])]) {
    if (f.room !== room) continue;
    if (f.t === 'gap') last = Math.max(last, f.to!);
    else if (f.t === 'msg') last = Math.max(last, f.seq!);
  }
  return last;
}

describe.each(['postgres', 'nats', 'node'] as const)('rooms model on the %s bus', (busKind) => {
  it('every client gets exactly the room’s sequence from its join point, gaps only past retention and reported', { timeout: 55_000 }, async () => {
    const instances: Instance[] = [];
    let run = 0;
    try {
      for (const name of ['m0', 'm1', 'm2']) instances.push(await instance(fresh, `${name}${busKind[0]}`, { retention: { maxMsgs: KEEP }, busKind }));
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 25 }), async (steps) => {
          const room = `model-${++run}`;
          const clients: ModelClient[] = [0, 1, 2].map(() => ({ conn: undefined, history: [], joinedAt: undefined }));
          const published = new Map<number, number>();
          const retire = async (model: ModelClient): Promise<void> => {
            if (model.conn === undefined) return;
            const conn = model.conn;
            model.conn = undefined;
            await conn.close();
            model.history.push(...conn.frames.filter((f) => f.room === room));
          };
          const connect = async (model: ModelClient, at: number): Promise<void> => {
            const since = model.joinedAt === undefined ? undefined : lastOf(model, room);
            const conn = await Client.connect(instances[at]!.rooms.port);
            model.conn = conn;
            const joined = await conn.join(room, since);
            expect(joined.t).toBe('joined');
            model.joinedAt ??= joined.seq!;
          };
          try {
            for (const s of steps) {
              if (s.kind === 'connect' && clients[s.client]!.conn === undefined) await connect(clients[s.client]!, s.at);
              else if (s.kind === 'drop') await retire(clients[s.client]!);
              else if (s.kind === 'broadcast') {
                const value = published.size;
                published.set(await instances[s.at]!.rooms.broadcast(room, value), value);
              } else if (s.kind === 'retain') await instances[0]!.retain();
            }
            // Everyone who ever joined comes back (to instance 0) and must reach the head.
            const head = published.size === 0 ? 0 : Math.max(...published.keys());
            for (const model of clients) if (model.joinedAt !== undefined && model.conn === undefined) await connect(model, 0);
            for (const model of clients) {
              if (model.joinedAt === undefined) continue;
              const deadline = Date.now() + 5_000;
              while (lastOf(model, room) < head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
              await retire(model);
              let expected = model.joinedAt + 1;
              for (const f of model.history) {
                if (f.t === 'msg') {
                  expect(f.seq, `client sequence at ${expected}`).toBe(expected);
                  expect(f.data).toBe(published.get(f.seq!));
                  expected++;
                } else if (f.t === 'gap') {
                  expect(f.from).toBe(expected);
                  expect(f.reason).toBe('retention');
                  // Only what retention could have evicted: below the newest KEEP of the room.
                  expect(f.to!).toBeLessThanOrEqual(head - KEEP);
                  expected = f.to! + 1;
                }
              }
              expect(expected - 1, 'reached the head').toBe(head);
            }
          } finally {
            for (const model of clients) await retire(model);
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      for (const one of instances) await one.stop();
    }
  });
});

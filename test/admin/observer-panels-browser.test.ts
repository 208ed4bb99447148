/**
 * The observer page's replication and rooms panels, against real parts: two cluster nodes in this
 * process replicating a model (node a's entries dated ten minutes ahead, so node b's pull
 * replicator stalls 10 entries behind, deterministically), and a rooms instance under node b's root
 * with real WebSocket clients in two rooms, one of them not reading (its frames queue). The SSE
 * frame carries the lag (`sample.replicationLag`) and the sections; the page, in Chromium, shows
 * the replicators' state and lag, the lag chart, and the rooms with their socket counts and the
 * slow socket's queue depth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObserverFrame } from '../../src/admin/index.js';
import { startNode as startAppNode } from '../../src/admin/index.js';
import type { Database } from '../../src/data/index.js';
import { defineModel, field, Orm } from '../../src/data/orm/index.js';
import { Oplog, OplogApplier, ormTarget } from '../../src/data/replication/index.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { nodeBus, Replication, roomsChild, ROOM_SOCKET_SERVER_BEHAVIOUR, type Bus, type Node } from '../../src/nodes/index.js';
import { RoomSocketServer } from '../../src/nodes/rooms/socket-server.js';
import { testNode } from '../nodes/support.js';
import { Client } from '../nodes/rooms/support.js';
import { frameWhere, openObserver, type OpenPage } from './observer-page.js';

const TOKEN = 'observer-panels-token-0123456789';
const Note = defineModel('notes', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-observer-panels-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the observer page’s replication and rooms panels', () => {
  it('shows the replicators with their lag, and the rooms with their sockets and queue depths', { timeout: 60_000 }, async () => {
    expect(RoomSocketServer.name).toBe(ROOM_SOCKET_SERVER_BEHAVIOUR);
    const dbs: Database[] = [];
    const nodes: Node[] = [];
    const clients: Client[] = [];
    let bus: Bus | undefined;
    let open: OpenPage | undefined;
    let app: Awaited<ReturnType<typeof startAppNode>> | undefined;
    try {
      const aNode = await testNode('panels_a');
      nodes.push(aNode);
      const aDb = await openSqlite(aNode.system, { file: join(dir, 'a.db') });
      dbs.push(aDb);
      const aOplog = await Oplog.open(aDb, { instance: aNode.name, now: () => Date.now() + 600_000 });
      const aOrm = new Orm(aDb, { oplog: aOplog });
      await aOrm.createTables(Note);
      await Replication.start(aNode, { source: aOplog, sink: new OplogApplier(aOplog, { targets: [ormTarget(aDb, Note)] }) });

      const bNode = await testNode('panels_b');
      nodes.push(bNode);
      const bDb = await openSqlite(bNode.system, { file: join(dir, 'b.db') });
      dbs.push(bDb);
      const bOplog = await Oplog.open(bDb, { instance: bNode.name });
      await new Orm(bDb, { oplog: bOplog }).createTables(Note);
      const replication = Replication.childSpec(bNode, { source: bOplog, sink: new OplogApplier(bOplog, { targets: [ormTarget(bDb, Note)] }), retryMinMs: 20, retryMaxMs: 100 });
      bus = await nodeBus(bNode, { file: join(dir, 'bus.db'), pollIntervalMs: 100, retentionIntervalMs: 0 });
      const rooms = roomsChild('rooms', { bus, instance: 'rooms-b', sendQueueMax: 5_000 });
      app = await startAppNode({ system: bNode.system, root: { children: [replication, rooms] }, admin: { port: 0, token: TOKEN, observer: { sampleIntervalMs: 200 } }, signals: false, log: () => {} });

      await aNode.connect(bNode.name);
      for (let i = 1; i <= 10; i++) await aOrm.insert(Note, { id: BigInt(i), body: `a ${i}` });
      await until('b stalled 10 behind', () => replication.replication.stats().peers[0]?.state === 'stalled' && replication.replication.lag(aNode.name) === 10);

      const port = rooms.current!.port;
      for (let i = 0; i < 3; i++) clients.push(await Client.connect(port));
      for (const client of clients) await client.join('lobby');
      await clients[0]!.join('ops');
      // The third client stops reading: once the socket buffers are full its frames queue on the server.
      const slow = clients[2]!;
      (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = 'x'.repeat(60_000);
      for (let i = 0; i < 400; i++) await rooms.current!.broadcast('lobby', { i, big });
      await until('frames queued for the slow socket', async () => (await rooms.current!.detail()).queued > 0);

      // The live frame: the lag in the sample, the replicators and rooms in b's tree.
      const frame = await frameWhere(app.adminUrl!, (f) => f.sample.replicationLag === 10 && (f.trees[0] as unknown as { sections: Record<string, unknown[]> }).sections['rooms']?.length === 1, { token: TOKEN });
      const sections = (frame.trees[0] as unknown as { sections: Record<string, { value: any }[]> }).sections;
      expect(sections['replication']!.map((entry) => entry.value.direction).sort()).toEqual(['pull', 'push']);
      expect(sections['replication']!.find((entry) => entry.value.direction === 'pull')!.value).toMatchObject({ peer: aNode.name, state: 'stalled', lag: 10, cursor: 0, head: 10 });
      const detail = sections['rooms']![0]!.value;
      expect(detail).toMatchObject({ instance: 'rooms-b', sockets: 3, rooms: 2, roomList: [{ room: 'lobby', sockets: 3 }, { room: 'ops', sockets: 1 }] });
      expect(detail.slowSockets[0]).toMatchObject({ socket: slow.socket, rooms: 1, queued: expect.any(Number) });
      expect(detail.slowSockets[0].queued).toBeGreaterThan(0);

      // The page: both panels, with those figures, and the lag chart.
      open = await openObserver(dir, app.adminUrl!, TOKEN);
      const { page } = open;
      const pull = page.locator(`#replication-view tr[data-peer="${aNode.name}"][data-direction="pull"]`);
      await pull.locator('td.lag', { hasText: /^10$/ }).waitFor();
      expect(await pull.textContent()).toContain('stalled');
      await page.locator(`#replication-view tr[data-peer="${aNode.name}"][data-direction="push"]`).waitFor();
      await page.locator('#chart-replication canvas').waitFor();
      const instance = page.locator('#rooms-view .rooms[data-instance="rooms-b"]');
      await instance.locator('.rooms-summary td.sockets', { hasText: /^3$/ }).waitFor();
      await instance.locator('tr[data-room="lobby"] td.sockets', { hasText: /^3$/ }).waitFor();
      await instance.locator('tr[data-room="ops"] td.sockets', { hasText: /^1$/ }).waitFor();
      await instance.locator(`tr[data-socket="${slow.socket}"] td.queued`, { hasText: /^[1-9]\d*\/5000$/ }).waitFor();
      expect(await page.locator('#replication-section').isVisible()).toBe(true);
      expect(open.problems).toEqual([]);
    } finally {
      await open?.context.close();
      for (const client of clients) {
        (client.ws as unknown as { terminate(): void }).terminate();
      }
      await app?.stop();
      await bus?.close();
      for (const db of dbs) await db.close().catch(() => undefined);
      for (const node of nodes) await node.stop();
    }
  });
});

/**
 * The observer page's HTTP side on a real node: its files (own and uPlot's, under the size budget,
 * nothing from elsewhere), `/events` (token, frames with the live tree and rates, its own connection
 * cap, frames skipped for a reader that stopped reading), and its options.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Admin, startAdminHttp } from '../../src/admin/index.js';
import { MAX_OBSERVER_PAGE_BYTES, observerAssets } from '../../src/admin/observer/assets.js';
import type { ObserverFrame, ObserverSample } from '../../src/admin/observer/frame.js';
import type { TreeSnapshot } from '../../src/admin/tree-snapshot.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { openSqliteTaskQueue } from '../../src/bus/index.js';
import { eventually, sleep, testSystem } from '../support/systems.js';
import { Counter, startTestNode } from './helpers.js';
import { GenServer } from '../../src/behaviours/index.js';

const TOKEN = 'observer-test-token-0123456789';

const counterChild = (id: string) => ({ id, start: ({ system, parent }: { system: any; parent: any }) => GenServer.start(system, () => new Counter(id), { link: parent }) });

/** Reads SSE events from `/events` until `until` says enough; then aborts the stream. */
async function readEvents(url: string, headers: Record<string, string>, until: (events: { event: string; data: any }[]) => boolean, timeoutMs = 10_000): Promise<{ event: string; data: any }[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const response = await fetch(`${url}/events`, { headers, signal: controller.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: { event: string; data: any }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
      }
      if (until(events)) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

const frames = (events: { event: string; data: any }[]): ObserverFrame[] => events.filter((e) => e.event === 'frame').map((e) => e.data as ObserverFrame);

describe('the observer page', () => {
  it('serves its own files and uPlot, with a strict policy, under the size budget, from nowhere else', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN } });
    let total = 0;
    const require = createRequire(import.meta.url);
    const files = ['/', '/observer/observer-common.js', '/observer/observer-panels.js', '/observer/observer-actions.js', '/observer/observer-tasks.js', '/observer/observer.js', '/observer/observer.css', '/observer/uplot.js', '/observer/uplot.css'];
    // Every file the page has is counted.
    expect([...observerAssets().keys()].sort()).toEqual([...files].sort());
    for (const path of files) {
      // No token: the files hold no data, and a browser cannot send one when it navigates.
      const response = await fetch(`${node.adminUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      const body = Buffer.from(await response.arrayBuffer());
      total += body.length;
      if (path === '/observer/uplot.js') expect(body.equals(readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')))).toBe(true);
      if (path === '/') {
        const html = body.toString();
        expect(html).toContain('<title>Molo observer</title>');
        // Every script and style is the surface's own.
        for (const match of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(match[1]).toMatch(/^\/observer\//);
      }
    }
    expect(total).toBeGreaterThan(40_000);
    expect(total).toBeLessThan(MAX_OBSERVER_PAGE_BYTES);
    expect((await fetch(`${node.adminUrl}/`, { method: 'POST' })).status).toBe(405);
    // The JSON endpoints still need the token.
    expect((await fetch(`${node.adminUrl}/tree`)).status).toBe(401);
  });

  it('/events: 401 without the token; history, then frames with the live tree and the rates', async () => {
    const { node } = await startTestNode({
      root: { children: [counterChild('worker')] },
      admin: { port: 0, token: TOKEN, observer: { sampleIntervalMs: 100 } },
    });
    const refused = await fetch(`${node.adminUrl}/events`);
    expect([refused.status, ((await refused.json()) as any).error.code]).toEqual([401, 'ADMIN_UNAUTHORIZED']);
    const auth = { authorization: `Bearer ${TOKEN}` };
    let crashed = false;
    const events = await readEvents(node.adminUrl!, auth, (seen) => {
      const got = frames(seen);
      if (!crashed && got.length >= 2) {
        crashed = true;
        void Supervisor.whichChild(node.system, node.root, 'worker').then((entry) => node.system.call(entry.ref as never, 'crash').catch(() => {}));
      }
      const last = got.at(-1);
      return last !== undefined && (last.trees[0] as TreeSnapshot).root?.children?.[0]?.restartCount === 1 && last.sample.restartsPerSec !== null;
    });
    expect(events[0]!.event).toBe('history');
    const got = frames(events);
    const first = got[0]!;
    expect(first.node).toBe(node.system.node);
    expect(first.links).toBeNull();
    expect(first.queues).toBeNull();
    expect(first.sample.messagesPerSec).toBeNull();
    const tree = first.trees[0] as TreeSnapshot;
    expect(tree.root!.children![0]).toMatchObject({ id: 'worker', state: 'running', restartCount: 0, process: { mailboxLength: 0 } });
    expect(tree.root!.supervisor).toMatchObject({ intensity: expect.any(Number), remainingIntensity: expect.any(Number) });
    const last = got.at(-1)!;
    expect((last.trees[0] as TreeSnapshot).root!.children![0]!.restartCount).toBe(1);
    expect(got.some((frame) => (frame.sample.restartsPerSec ?? 0) > 0)).toBe(true);
    // A later stream begins with the samples taken so far.
    const again = await readEvents(node.adminUrl!, auth, (seen) => seen.length >= 1);
    const history = again[0]!.data as ObserverSample[];
    expect(history.length).toBeGreaterThanOrEqual(got.length);
    expect(history.every((sample, i) => i === 0 || sample.at >= history[i - 1]!.at)).toBe(true);
    // With no page open no looks are taken: an unwatched node pays nothing for its page.
    await sleep(150);
    const idleSince = Date.now();
    await sleep(800);
    const later = (await readEvents(node.adminUrl!, auth, (seen) => seen.length >= 1))[0]!.data as ObserverSample[];
    expect(later.filter((sample) => sample.at > idleSince + 50 && sample.at < idleSince + 750)).toEqual([]);
  });

  it('caps its event streams with ADMIN_EVENTS_FULL, and frees the slot when a page goes', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, observer: { maxEventConnections: 1, sampleIntervalMs: 100 } } });
    const first = new AbortController();
    const open = await fetch(`${node.adminUrl}/events`, { signal: first.signal });
    expect(open.status).toBe(200);
    const second = await fetch(`${node.adminUrl}/events`);
    expect(second.status).toBe(503);
    expect(((await second.json()) as any).error).toMatchObject({ code: 'ADMIN_EVENTS_FULL', message: expect.stringContaining('observer.maxEventConnections = 1') });
    // Probes and reads are untouched by the open stream.
    expect((await fetch(`${node.adminUrl}/health`)).status).toBe(200);
    expect((await fetch(`${node.adminUrl}/tree`)).status).toBe(200);
    first.abort();
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      await sleep(20);
      const controller = new AbortController();
      status = (await fetch(`${node.adminUrl}/events`, { signal: controller.signal })).status;
      controller.abort();
    }
    expect(status).toBe(200);
  });

  it('skips frames for a stream whose reader stopped reading, once its buffer is full', { timeout: 30_000 }, async () => {
    const system = testSystem();
    await Admin.start({ system });
    // 3,000 children make frames of a few hundred KB: the socket's kernel buffers fill within a few.
    const children = Array.from({ length: 3_000 }, (_, i) => ({ id: `idle-${i}`, start: ({ system, parent }: { system: any; parent: any }) => system.spawn(() => {}, { link: parent }) }));
    const root = await Supervisor.start(system, { children }, { name: 'root' });
    Admin.attachRoot(system, 'admin', root);
    const server = await startAdminHttp({ runtime: system, port: 0, observer: { sampleIntervalMs: 100, maxEventBufferBytes: 64 * 1024 } });
    try {
      const socket = connect(server.port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(`GET /events HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\n\r\n`);
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      // The reader stops reading: the server must stop queueing for it.
      socket.pause();
      await eventually(() => server.events!.skipped > 0, 20_000, 'a skipped frame');
      const sent = server.events!.sent;
      const skipped = server.events!.skipped;
      await sleep(600);
      expect(server.events!.skipped).toBeGreaterThan(skipped);
      // Nothing more was queued for it while its buffer stayed full.
      expect(server.events!.sent).toBe(sent);
      expect(server.events!.open).toBe(1);
      socket.destroy();
      await eventually(() => server.events!.open === 0, 5_000, 'the stream closed');
    } finally {
      await server.close();
      await Supervisor.stop(system, root);
      await Admin.stop(system, 'admin');
    }
  });

  it('says so on the stream when a look fails (the task queue closed under it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'molo-observer-problem-'));
    const system = testSystem();
    const queue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db'), readers: 0 });
    await queue.createQueue('q');
    await Admin.start({ system });
    const server = await startAdminHttp({ runtime: system, port: 0, tasks: queue, observer: { sampleIntervalMs: 100 } });
    try {
      let closed = false;
      const events = await readEvents(server.url, {}, (seen) => {
        if (!closed && frames(seen).length > 0) {
          closed = true;
          expect(frames(seen)[0]!.queues).toMatchObject([{ name: 'q', depth: 0, paused: false }]);
          void queue.close();
        }
        return seen.some((event) => event.event === 'problem');
      });
      expect(events.find((event) => event.event === 'problem')!.data).toMatchObject({ code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
    } finally {
      await server.close();
      await queue.close();
      await Admin.stop(system, 'admin');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses unknown and out-of-range observer options, naming them', async () => {
    const runtime = testSystem();
    await expect(startAdminHttp({ runtime, port: 0, observer: { sampleIntervalMS: 100 } as never })).rejects.toMatchObject({ code: 'ADMIN_INVALID_OPTION', message: expect.stringContaining('did you mean sampleIntervalMs?') });
    await expect(startAdminHttp({ runtime, port: 0, observer: { maxEventConnections: 65 } })).rejects.toMatchObject({ option: 'admin.observer.maxEventConnections' });
    await expect(startAdminHttp({ runtime, port: 0, maxConnections: 4, observer: { maxEventConnections: 4 } })).rejects.toThrow(/maxEventConnections.*1\.\.3/);
    await expect(startAdminHttp({ runtime, port: 0, observer: { samples: 5 } })).rejects.toThrow(/samples.*10\.\.3600/);
    const off = await startAdminHttp({ runtime, port: 0, observer: false });
    expect((await fetch(`${off.url}/`)).status).toBe(404);
    expect(off.events).toBeUndefined();
    await off.close();
  });
});


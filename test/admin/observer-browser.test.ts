/**
 * The observer page end to end in headless Chromium (playwright-core driving Debian's chromium),
 * against two nodes linked over TCP on loopback, served by the first with a token and a real SQLite
 * task queue: both trees appear; a crash on the second node shows as a restart count going up,
 * live; a restart from the page is refused without the token and done with it; a queue is paused
 * from the page; a stream is viewed; the other node's process list is filtered and sorted; the
 * charts draw; and the screenshot is not blank.
 *
 * Chromium is not optional: without /usr/bin/chromium this test fails (CI installs it).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import { Admin, clusterView, startAdminHttp, type AdminHttpServer } from '../../src/admin/index.js';
import { GenServer, Supervisor } from '../../src/behaviours/index.js';
import { openSqliteStreams, openSqliteTaskQueue, type SqlStreamStore, type SqlTaskQueue } from '../../src/bus/index.js';
import type { Node } from '../../src/nodes/index.js';
import { testNode } from '../nodes/support.js';
import { Counter } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'observer-browser-token-0123456789';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

const counter = (id: string) => ({ id, start: ({ system, parent }: { system: any; parent: any }) => GenServer.start(system, () => new Counter(id), { link: parent }) });

let dir: string;
let queue: SqlTaskQueue | undefined;
let streams: SqlStreamStore | undefined;
let server: AdminHttpServer | undefined;
let context: BrowserContext | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-observer-browser-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Within the test: the leak check after each test wants the browser, the surface and the queue gone. */
async function cleanUp(): Promise<void> {
  await context?.close();
  await server?.close();
  await queue?.close();
  await streams?.close();
  streams = undefined;
  context = undefined;
  server = undefined;
  queue = undefined;
}

async function startCluster(): Promise<{ a: Node; b: Node; roots: Map<string, Ref> }> {
  const a = await testNode('obs_a');
  const b = await testNode('obs_b');
  const roots = new Map<string, Ref>();
  for (const node of [a, b]) {
    await Admin.start({ system: node.system });
    const root = await Supervisor.start(node.system, { children: [counter('worker'), counter('crasher')], intensity: 10 }, { name: 'root' });
    Admin.attachRoot(node.system, 'admin', root);
    roots.set(node.name, root);
  }
  await a.connect(b.name);
  return { a, b, roots };
}

const row = (page: Page, node: string, path: string) => page.locator(`.tree[data-node="${node}"] tr[data-path="${path}"]`);

describe('the observer page in Chromium', () => {
  it('shows both trees live, restarts with the token only, pauses a queue, draws charts', { timeout: 60_000 }, async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is required (apt-get install chromium)`).toBe(true);
    try {
      await drive();
    } finally {
      await cleanUp();
    }
  });
});

async function drive(): Promise<void> {
  const { a, b, roots } = await startCluster();
  queue = await openSqliteTaskQueue(a.system, { file: join(dir, 'tasks.db'), readers: 0 });
  await queue.createQueue('emails');
  await queue.enqueue('emails', { name: 'send', payload: { to: 'x@example.com' } });
  streams = await openSqliteStreams(a.system, { file: join(dir, 'streams.db'), readers: 0 });
await streams.createStream('orders');
await streams.publish('orders', { order: 'A-1001', total: 42 });
server = await startAdminHttp({ runtime: a.system, port: 0, token: TOKEN, nodes: clusterView(a), tasks: queue, streams, observer: { sampleIntervalMs: 200 } });

  context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 1400 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.setDefaultTimeout(10_000);

  await page.goto(`${server.url}/`);
  // The surface has a token: the page asks for it.
  await page.locator('#login').waitFor({ state: 'visible' });
  await page.fill('#token', TOKEN);
  await page.click('#login button[type=submit]');
  await page.locator('#main').waitFor({ state: 'visible' });

  // Both nodes' trees, with their children's state and restart counts; the link with its RTT.
  for (const node of [a.name, b.name]) {
    await row(page, node, 'root/worker').locator('td.state', { hasText: 'running' }).waitFor();
    await row(page, node, 'root/crasher').locator('td.restarts', { hasText: /^0$/ }).waitFor();
  }
  await page.locator(`#nodes-view tr[data-node="${b.name}"] td`, { hasText: /ms$/ }).waitFor();
  expect(await page.locator('#nodes-view').textContent()).toContain('up');

  // A crash on the second node: its restart count changes on the page without a reload.
  const crasher = await Supervisor.whichChild(b.system, roots.get(b.name)!, 'crasher');
  await b.system.call(crasher.ref as Ref, 'crash').catch(() => {});
  await row(page, b.name, 'root/crasher').locator('td.restarts', { hasText: /^1$/ }).waitFor();

  // Restart from the page without the token: refused, nothing restarted.
  const before = await Supervisor.whichChild(b.system, roots.get(b.name)!, 'worker');
  await page.evaluate("sessionStorage.removeItem('molo.admin.token')");
  await row(page, b.name, 'root/worker').locator('button', { hasText: 'Restart' }).click();
  await page.locator('#action-result.refused', { hasText: '401 ADMIN_UNAUTHORIZED' }).waitFor();
  expect(String((await Supervisor.whichChild(b.system, roots.get(b.name)!, 'worker')).ref)).toBe(String(before.ref));
  // With it: done, on the other node, through its supervisor.
  await page.evaluate(`sessionStorage.setItem('molo.admin.token', ${JSON.stringify(TOKEN)})`);
  await row(page, b.name, 'root/worker').locator('button', { hasText: 'Restart' }).click();
  await page.locator('#action-result:not(.refused)', { hasText: 'done' }).waitFor();
  const after = await Supervisor.whichChild(b.system, roots.get(b.name)!, 'worker');
  expect(String(after.ref)).not.toBe(String(before.ref));

  // Pause the queue from the page.
  await page.locator('#queues-view tr[data-queue="emails"] button', { hasText: 'Pause' }).click();
  await page.locator('#queues-view tr[data-queue="emails"] .queue-state', { hasText: 'paused' }).waitFor();
  expect((await queue.queueInfo('emails')).paused).toBe(true);
  expect(await page.locator('#queues-view tr[data-queue="emails"]').textContent()).toMatch(/paused1/);

  // The process view: the other node's processes, filtered and sorted on the page.
  await page.locator(`#ps-node option[value="${b.name}"]`).waitFor({ state: 'attached' });
  await page.selectOption('#ps-node', b.name);
  await page.fill('#ps-filter', 'Counter');
  await page.locator('#ps-note', { hasText: /^2 of \d+ processes/ }).waitFor();
  expect(await page.locator('#ps-view tbody tr').count()).toBe(2);
  await page.locator('#ps-view th[data-sort="messagesHandled"]').click();
  await page.locator('#ps-view th[data-sort="messagesHandled"]', { hasText: '↓' }).waitFor();
  const handled = (await page.locator('#ps-view tbody tr td:nth-child(6)').allTextContents()).map(Number);
  expect(handled).toEqual([...handled].sort((x, y) => y - x));
  expect(await page.locator('#ps-view tbody').textContent()).toContain(b.name);

  // View a stream: its messages, the value decoded.
  await page.locator('#stream-list tr[data-stream="orders"] button', { hasText: 'View' }).click();
  await page.locator('#stream-messages tr[data-seq="1"] .payload', { hasText: '"order":"A-1001"' }).waitFor();

  // The charts are drawn by uPlot, and the page is not blank.
  await page.locator('#chart-rates canvas').waitFor();
  await page.locator('#chart-depth canvas').waitFor();
  const png = await page.screenshot({ fullPage: true });
  // Counted in the page (the test's tsconfig has no DOM types: the script is text run in the browser).
const colours = await page.evaluate<number>(`(async () => {
  const image = new Image();
  image.src = 'data:image/png;base64,${png.toString('base64')}';
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const draw = canvas.getContext('2d');
  draw.drawImage(image, 0, 0);
  const pixels = draw.getImageData(0, 0, image.width, image.height).data;
  const seen = new Set();
  for (let i = 0; i < pixels.length; i += 4) seen.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  return seen.size;
})()`);
  if (process.env.OBSERVER_SCREENSHOT !== undefined) writeFileSync(process.env.OBSERVER_SCREENSHOT, png);
  expect(colours).toBeGreaterThan(50);
  expect(problems).toEqual([]);
}

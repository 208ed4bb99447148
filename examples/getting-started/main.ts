/**
 * The getting-started app, end to end (docs/getting-started.md walks through it): two nodes (this
 * process and peer.ts, forked), a remote call between them, a task stored through the ORM, a
 * schedule that fires, and the observer page at `/`. Then it keeps running until Ctrl-C (SIGINT)
 * or SIGTERM, or stops at once with --once (or MOLO_EXAMPLE_ONCE=1); either way it exits 0.
 * Run: npm run example examples/getting-started/main.ts  (add -- --once for a bounded run)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from './app.js';
import { welcome } from './handlers.js';
import { Guest } from './model.js';

const once = process.argv.includes('--once') || process.env['MOLO_EXAMPLE_ONCE'] === '1';
// Every node of the cluster proves this secret in its handshake (≥ 16 bytes; from the environment in an app).
const secret = process.env['MOLO_CLUSTER_SECRET'] ?? 'getting-started-secret-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'molo-getting-started-'));

/** Polls `check` every 50 ms until it is true; fails after `timeoutMs`. */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// 1. The second node: its own OS process, with this process's Node flags (tsx, the molo-source condition).
const peer = fork(fileURLToPath(new URL('./peer.ts', import.meta.url)), [], { env: { ...process.env, MOLO_CLUSTER_SECRET: secret } });
const ready = await new Promise<{ ready: string; pid: number }>((resolve, reject) => {
  peer.once('message', (message) => resolve(message as { ready: string; pid: number }));
  peer.once('exit', (code) => reject(new Error(`peer exited with ${String(code)} before it was ready`)));
});
const peerName = ready.ready;
console.log(`peer node ${peerName} up (pid ${ready.pid})`);

// 2. This node: cluster node, database, queue, supervision tree, admin surface.
const app = await startApp({ dir, secret });
console.log(`app node ${app.cluster.name} up; observer page: ${app.node.adminUrl}/`);

// However the node stops (Ctrl-C, SIGTERM, or app.node.stop() below), the rest follows it down.
void app.node.stopped.then(async (result) => {
  await app.close();
  await new Promise<void>((resolve) => {
    if (peer.exitCode !== null || peer.signalCode !== null) return resolve();
    peer.once('exit', () => resolve());
    // A Ctrl-C reaches the peer too (same process group): its channel may close under the send.
    const terminate = () => peer.kill('SIGTERM');
    if (peer.connected) peer.send('stop', (error) => error && terminate());
    else terminate();
  });
  rmSync(dir, { recursive: true, force: true });
  console.log(`stopped (${result.trigger}, clean: ${result.clean}); peer stopped too`);
  // A failed run exits 1 even though the stop itself was clean.
  process.exit(process.exitCode === 1 ? 1 : result.exitCode);
});

try {
  // 3. The supervision tree, as the admin surface reports it.
  const tree = (await (await fetch(`${app.node.adminUrl}/tree`)).json()) as { root: { children: { id: string; state: string }[] } };
  console.log(`supervision tree: root -> ${tree.root.children.map((child) => `${child.id} (${child.state})`).join(', ')}`);

  // 4. A remote call: the greeter on the peer node, by name, over the node transport.
  await app.cluster.connect(peerName);
  const answer = await app.cluster.callNamed('greeter', peerName, { greet: 'ada' });
  console.log(`remote call to greeter on ${peerName} answered: "${String(answer)}"`);

  // 5. A task: enqueued, run by the worker pool, stored through the ORM.
  await welcome.enqueue(app.queue, 'guests', { name: 'ada' }, { idempotencyKey: 'welcome:ada' });
  await waitFor('the welcome task', async () => (await app.orm.query(Guest).count()) > 0);
  const again = await welcome.enqueue(app.queue, 'guests', { name: 'ada' }, { idempotencyKey: 'welcome:ada' });
  console.log(`welcome for ada enqueued again: duplicate ${again.duplicate}`);

  // 6. A schedule: a one-shot entry a second from now; the scheduler enqueues the report task.
  await app.scheduler.add({ id: 'guest-report', queue: 'guests', task: { name: 'report' }, schedule: { kind: 'at', runAt: Date.now() + 1_000 } });
  console.log('scheduled guest-report in 1 s');
  await waitFor('the scheduled report', async () => (await app.queue.queueInfo('guests')).counts.succeeded >= 2);

  // 7. The observer page: the admin surface serves it at `/`.
  const page = await fetch(`${app.node.adminUrl}/`);
  const html = await page.text();
  console.log(`GET / -> ${page.status} ${page.headers.get('content-type')}, ${/<title>(.*)<\/title>/.exec(html)?.[1] ?? 'no title'}`);

  if (once) await app.node.stop();
  else console.log(`running; open ${app.node.adminUrl}/ in a browser. Ctrl-C stops it`);
} catch (error) {
  console.error(`getting-started failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
  await app.node.stop();
}

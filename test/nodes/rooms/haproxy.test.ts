/**
 * The deployment, for real: HAProxy (cookie stickiness, health checks, redispatch) in front of two
 * instances in their own OS processes sharing one Postgres database. Sockets land on both; a
 * broadcast sent once reaches every socket once; one instance is SIGKILLed, and its sockets
 * reconnect through HAProxy to the survivor and catch up with no gap and no duplicate; the dead
 * instance's presence entries are swept and their leaves published.
 */
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../../support/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { reapChildrenAfterEach } from '../../support/reap-children.js';
import { projectRoot } from '../../support/run-script.js';
import { sleep } from '../../support/systems.js';
import { Client } from './support.js';
import { haproxyConfig } from './haproxy-config.js';
import { readFileSync } from 'node:fs';

const HAPROXY = '/usr/sbin/haproxy';
const spawned = reapChildrenAfterEach<ChildProcess>();
let fresh: FreshDatabase;
let dir: string;
beforeAll(() => {
  fresh = freshDatabase('rooms_lb');
  dir = mkdtempSync(join(tmpdir(), 'molo-haproxy-'));
});
afterAll(() => {
  fresh.drop();
  rmSync(dir, { recursive: true, force: true });
});


function startInstance(name: string, port: number): Promise<ChildProcess> {
  const child = fork(join('test/nodes/rooms/fixtures/instance.ts'), [fresh.database, name, String(port)], {
    cwd: projectRoot,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, MOLO_PG_HOST: fresh.host, MOLO_PG_PORT: String(fresh.port), MOLO_PG_USER: fresh.user },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  spawned.add(child);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`instance ${name} exited (${String(code)})`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('behind HAProxy', () => {
  it('docs/deployment.md quotes the tested configuration verbatim', () => {
    expect(readFileSync(join(projectRoot, 'docs/deployment.md'), 'utf8')).toContain(haproxyConfig(8080, 3001, 3002));
  });

  it.skipIf(!existsSync(HAPROXY))('sockets on both instances; broadcast once; SIGKILL one: its sockets reconnect to the survivor and catch up exactly', { timeout: 50_000 }, async () => {
    const [front, pa, pb] = [await freePort(), await freePort(), await freePort()];
    const [a, b] = await Promise.all([startInstance('a', pa), startInstance('b', pb)]);
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(front, pa, pb));
    const haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
    spawned.add(haproxy);
    const clients: Client[] = [];
    try {
      // HAProxy's first health checks.
      await sleep(800);
      for (let i = 0; i < 6; i++) clients.push(await Client.connect(front));
      const where = clients.map((c) => c.socket.split('-')[0]);
      expect(new Set(where)).toEqual(new Set(['a', 'b']));
      expect(clients.every((c) => /MOLO_INSTANCE=(a|b)/.test(c.cookie ?? ''))).toBe(true);
      for (const client of clients) expect((await client.join('lb')).t).toBe('joined');

      const publish = (via: ChildProcess, data: unknown): Promise<number> =>
        new Promise((resolve) => {
          via.once('message', (m: { published: number }) => resolve(m.published));
          via.send({ broadcast: ['lb', data] });
        });
      await publish(a, 0);
      for (const client of clients) await client.waitCount('lb', 1);

      a.kill('SIGKILL');
      await exited(a);
      const orphans = clients.filter((c) => c.socket.startsWith('a-'));
      for (const orphan of orphans) await orphan.closedOnce();
      // Published while they are away: they must get these on reconnect, once.
      for (let i = 1; i <= 5; i++) await publish(b, i);
      const again: Client[] = [];
      for (const orphan of orphans) {
        // The browser keeps its cookie (naming the dead server): HAProxy redispatches to the survivor.
        const client = await Client.connect(front, { cookie: orphan.cookie! });
        clients.push(client);
        expect(client.socket.startsWith('b-')).toBe(true);
        expect((await client.join('lb', orphan.last('lb'))).t).toBe('joined');
        again.push(client);
      }
      await publish(b, 6);
      for (const [i, orphan] of orphans.entries()) {
        await again[i]!.waitCount('lb', 6);
        await sleep(100);
        const all = [...orphan.msgs('lb'), ...again[i]!.msgs('lb')];
        expect(all.map((f) => f.data)).toEqual([0, 1, 2, 3, 4, 5, 6]);
        expect(again[i]!.frames.some((f) => f.t === 'gap')).toBe(false);
      }
      for (const survivor of clients.filter((c) => c.socket.startsWith('b-') && !again.includes(c))) {
        await survivor.waitCount('lb', 7);
        expect(survivor.msgs('lb').map((f) => f.data)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      }
      // The dead instance's presence rows expire and the survivor publishes their leaves.
      const watcher = again[0]!;
      for (const orphan of orphans) await watcher.wait((f) => f.t === 'presence' && f.event === 'leave' && f.socket === orphan.socket, 8_000);
    } finally {
      for (const client of clients) await client.close();
      haproxy.kill('SIGKILL');
      b.kill('SIGKILL');
      a.kill('SIGKILL');
      await Promise.all([exited(haproxy), exited(a), exited(b)]);
    }
  });
});

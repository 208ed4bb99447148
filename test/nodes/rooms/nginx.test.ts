/**
 * The same deployment behind nginx's open-source build (nginx-config.ts: a cookie nginx sets
 * itself, mapped to an upstream that prefers that instance and falls back to the other), running
 * lb-scenario.ts: broadcast once, SIGKILL one instance, its sockets fail over and catch up exactly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { freePort } from '../../support/ports.js';
import { reapChildrenAfterEach } from '../../support/reap-children.js';
import { projectRoot } from '../../support/run-script.js';
import { sleep } from '../../support/systems.js';
import { exited, failoverThroughBalancer, startInstance } from './lb-scenario.js';
import { nginxConfig } from './nginx-config.js';
import { connect } from 'node:net';

const NGINX = '/usr/sbin/nginx';
const spawned = reapChildrenAfterEach<ChildProcess>();
let fresh: FreshDatabase;
let dir: string;
beforeAll(() => {
  fresh = freshDatabase('rooms_nginx');
  dir = mkdtempSync(join(tmpdir(), 'molo-nginx-'));
});
afterAll(() => {
  fresh.drop();
  rmSync(dir, { recursive: true, force: true });
});

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('behind nginx', () => {
  it('docs/deployment.md quotes the tested configuration verbatim', () => {
    expect(readFileSync(join(projectRoot, 'docs/deployment.md'), 'utf8')).toContain(nginxConfig(8080, 3001, 3002, '/run/molo-nginx'));
  });

  it.skipIf(!existsSync(NGINX))('sockets on both instances; broadcast once; SIGKILL one: its sockets reconnect to the survivor and catch up exactly', { timeout: 50_000 }, async () => {
    const [first, second] = await Promise.all([startInstance(fresh, 'a', spawned), startInstance(fresh, 'b', spawned)]);
    const [a, b, pa, pb] = [first.child, second.child, first.port, second.port];
    const front = await freePort();
    const runDir = join(dir, 'run');
    mkdirSync(runDir);
    const cfg = join(dir, 'nginx.conf');
    writeFileSync(cfg, nginxConfig(front, pa, pb, runDir));
    // In the foreground (a child this test can kill), with its own prefix so nothing of the system's is touched.
    const nginx = spawn(NGINX, ['-p', dir, '-c', cfg, '-e', 'stderr', '-g', 'daemon off; master_process off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
    spawned.add(nginx);
    try {
      for (let tries = 0; !(await listening(front)); tries++) {
        if (tries > 200) throw new Error('nginx never listened');
        await sleep(50);
      }
      await failoverThroughBalancer(front, a, b);
    } finally {
      nginx.kill('SIGKILL');
      b.kill('SIGKILL');
      a.kill('SIGKILL');
      await Promise.all([exited(nginx), exited(a), exited(b)]);
    }
  });
});

/**
 * The deployment, for real: HAProxy (cookie stickiness, health checks, redispatch) in front of two
 * instances in their own OS processes sharing one Postgres database (lb-scenario.ts: broadcast
 * once, SIGKILL one instance, its sockets fail over and catch up exactly).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { freePort } from '../../support/ports.js';
import { reapChildrenAfterEach } from '../../support/reap-children.js';
import { projectRoot } from '../../support/run-script.js';
import { sleep } from '../../support/systems.js';
import { haproxyConfig } from './haproxy-config.js';
import { exited, failoverThroughBalancer, startInstance } from './lb-scenario.js';

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

describe('behind HAProxy', () => {
  it('docs/deployment.md quotes the tested configuration verbatim', () => {
    expect(readFileSync(join(projectRoot, 'docs/deployment.md'), 'utf8')).toContain(haproxyConfig(8080, 3001, 3002));
  });

  it.skipIf(!existsSync(HAPROXY))('sockets on both instances; broadcast once; SIGKILL one: its sockets reconnect to the survivor and catch up exactly', { timeout: 50_000 }, async () => {
    const [first, second] = await Promise.all([startInstance(fresh, 'a', spawned), startInstance(fresh, 'b', spawned)]);
    const [a, b, pa, pb] = [first.child, second.child, first.port, second.port];
    const front = await freePort();
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(front, pa, pb));
    const haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
    spawned.add(haproxy);
    try {
      // HAProxy's first health checks.
      await sleep(800);
      await failoverThroughBalancer(front, a, b);
    } finally {
      haproxy.kill('SIGKILL');
      b.kill('SIGKILL');
      a.kill('SIGKILL');
      await Promise.all([exited(haproxy), exited(a), exited(b)]);
    }
  });
});

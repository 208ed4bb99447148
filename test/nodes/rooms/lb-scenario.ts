/**
 * The scenario both load-balancer tests run (HAProxy and nginx): two instances in their own OS
 * processes sharing one Postgres database behind a sticky balancer. Sockets land on both; a
 * broadcast sent once reaches every socket once; one instance is SIGKILLed, and its sockets
 * reconnect through the balancer to the survivor and catch up with no gap and no duplicate; the
 * dead instance's presence entries are swept and their leaves published.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FreshDatabase } from '../../support/pg.js';
import { projectRoot } from '../../support/run-script.js';
import { sleep } from '../../support/systems.js';
import { Client } from './support.js';

/**
 * Starts instance `name` on a port of its own choosing (port 0: a port picked here and bound later
 * could be taken by a test running beside this one); resolves with the process and the port it listens on.
 */
export function startInstance(fresh: FreshDatabase, name: string, spawned: Set<ChildProcess>): Promise<{ readonly child: ChildProcess; readonly port: number }> {
  const child = fork(join('test/nodes/rooms/fixtures/instance.ts'), [fresh.database, name, '0'], {
    cwd: projectRoot,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, MOLO_PG_HOST: fresh.host, MOLO_PG_PORT: String(fresh.port), MOLO_PG_USER: fresh.user },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  spawned.add(child);
  return new Promise((resolve, reject) => {
    child.once('message', (message: { ready: number }) => resolve({ child, port: message.ready }));
    child.once('exit', (code) => reject(new Error(`instance ${name} exited (${String(code)})`)));
  });
}

export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Runs the scenario through the balancer listening on `front`, in front of instances `a` and `b`. */
export async function failoverThroughBalancer(front: number, a: ChildProcess, b: ChildProcess): Promise<void> {
  const clients: Client[] = [];
  try {
    for (let i = 0; i < 6; i++) clients.push(await Client.connect(front));
    const where = clients.map((c) => c.socket.split('-')[0]);
    expect(new Set(where)).toEqual(new Set(['a', 'b']));
    // The stickiness cookie names the instance each socket landed on.
    for (const client of clients) expect(client.cookie).toBe(`MOLO_INSTANCE=${client.socket.split('-')[0]}`);
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
      // The browser keeps its cookie (naming the dead server): the balancer sends it to the survivor.
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
  }
}

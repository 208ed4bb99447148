/**
 * The chat example: two instances (OS processes) behind HAProxy on the shared Postgres database.
 * Open the printed address in two browsers, join a room and chat; kill an instance (its pid is
 * printed) and watch its browsers reconnect through HAProxy to the other one and catch up.
 * Without HAProxy installed, open either instance directly. Ctrl-C stops everything.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FRONT = Number(process.env.CHAT_PORT ?? 8080);
const PORTS = [FRONT + 1, FRONT + 2];
const database = process.env.MOLO_PG_DATABASE ?? 'test';
const children: ChildProcess[] = [];

function instance(name: string, port: number): Promise<ChildProcess> {
  const child = fork(new URL('./instance.ts', import.meta.url), [name, String(port), database], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`instance ${name} exited (${String(code)})`)));
  });
}

const [a, b] = await Promise.all([instance('a', PORTS[0]!), instance('b', PORTS[1]!)]);
console.log(`instance a pid ${a.pid} on :${PORTS[0]}, instance b pid ${b.pid} on :${PORTS[1]}`);
if (existsSync('/usr/sbin/haproxy')) {
  // The configuration of docs/deployment.md.
  const cfg = join(mkdtempSync(join(tmpdir(), 'molo-chat-')), 'haproxy.cfg');
  writeFileSync(cfg, `global
  maxconn 2000
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout tunnel 1h
  option redispatch
  retries 2
frontend rooms
  bind 127.0.0.1:${FRONT}
  default_backend instances
backend instances
  balance roundrobin
  cookie MOLO_INSTANCE insert indirect nocache
  option httpchk GET /health
  server a 127.0.0.1:${PORTS[0]} check inter 300 fall 2 rise 1 cookie a
  server b 127.0.0.1:${PORTS[1]} check inter 300 fall 2 rise 1 cookie b
`);
  children.push(spawn('/usr/sbin/haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] }));
  console.log(`open http://127.0.0.1:${FRONT}/?name=ada (and ?name=bob in another browser)`);
} else console.log(`no HAProxy: open http://127.0.0.1:${PORTS[0]}/?name=ada and http://127.0.0.1:${PORTS[1]}/?name=bob`);
console.log('Ctrl-C stops it');

const stop = (): void => {
  for (const child of children) child.kill('SIGKILL');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

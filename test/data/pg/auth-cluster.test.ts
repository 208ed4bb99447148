/**
 * The throwaway-cluster harness itself (test/support/pg-cluster.ts): it starts with the roles and
 * pg_hba lines it promises, psql logs in with the passwords over TCP, restart/kill/start work, and
 * nothing is left behind: not after stop(), not when the test process exits or is killed.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processRunning, startCluster, type Cluster } from '../../support/pg-cluster.js';
import { projectRoot } from '../../support/run-script.js';
import { eventually } from '../../support/systems.js';

const alive = processRunning;

describe('pg-cluster harness', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ tls: true });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('lets the superuser in over TCP with its SCRAM password, and nobody with a wrong one', async () => {
    const { superuser } = cluster.users;
    expect(await cluster.psql('select current_user, rolsuper from pg_roles where rolname = current_user', { tcp: true })).toBe(`${superuser.name}|t`);
    await expect(cluster.psql('select 1', { tcp: true, password: 'wrong' })).rejects.toThrow(/password authentication failed/);
    expect(await cluster.psql("select left(rolpassword, 14) from pg_authid where rolname = current_user")).toBe('SCRAM-SHA-256$');
  });

  it('has an MD5-stored role on an md5 line and a role on a cleartext (password) line', async () => {
    const { md5, cleartext } = cluster.users;
    expect(await cluster.psql(`select rolname, left(rolpassword, 3) from pg_authid where rolname in ('${md5.name}', '${cleartext.name}') order by 1`)).toBe(
      `${cleartext.name}|SCR\n${md5.name}|md5`,
    );
    expect(await cluster.psql('select current_user', { tcp: true, user: md5.name, password: md5.password })).toBe(md5.name);
    expect(await cluster.psql('select current_user', { tcp: true, user: cleartext.name, password: cleartext.password })).toBe(cleartext.name);
    const hba = await cluster.psql("select type, user_name[1], auth_method from pg_hba_file_rules where type <> 'local' order by line_number");
    expect(hba).toBe(['host|molo_md5|md5', 'host|molo_cleartext|password', 'host|all|scram-sha-256'].join('\n'));
  });

  it('serves TLS with a self-signed certificate it hands out', async () => {
    expect(cluster.caCert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(await cluster.psql('select ssl from pg_stat_ssl where pid = pg_backend_pid()', { tcp: true, sslmode: 'require' })).toBe('t');
    expect(await cluster.psql('select ssl from pg_stat_ssl where pid = pg_backend_pid()', { tcp: true })).toBe('f');
    const key = statSync(join(cluster.dir, 'data', 'server.key'));
    expect(key.mode & 0o777).toBe(0o600);
  });

  it('restarts on the same port, and comes back after a SIGKILL of the postmaster', async () => {
    const before = cluster.postmasterPid()!;
    await cluster.restart();
    const afterRestart = cluster.postmasterPid()!;
    expect(afterRestart).not.toBe(before);
    expect(await cluster.psql('select 1', { tcp: true })).toBe('1');

    await cluster.kill();
    expect(alive(afterRestart)).toBe(false);
    expect(cluster.postmasterPid()).toBeUndefined();
    await expect(cluster.psql('select 1', { tcp: true, timeoutMs: 5_000 })).rejects.toThrow();
    const started = Date.now();
    await cluster.start();
    expect(await cluster.psql('select 1', { tcp: true })).toBe('1');
    console.log(`pg-cluster: start after SIGKILL took ${Date.now() - started} ms`);
  }, 60_000);
});

describe('pg-cluster cleanup', () => {
  it('stop() kills the server and removes the directory; stop() again is harmless', async () => {
    const started = Date.now();
    const cluster = await startCluster({ requireTls: true });
    console.log(`pg-cluster: start with TLS took ${Date.now() - started} ms`);
    try {
      await expect(cluster.psql('select 1', { tcp: true })).rejects.toThrow(/no pg_hba.conf entry|rejects connection/);
      expect(await cluster.psql('select 1', { tcp: true, sslmode: 'require' })).toBe('1');
    } finally {
      const pid = cluster.postmasterPid()!;
      await cluster.stop();
      expect(alive(pid)).toBe(false);
      expect(existsSync(cluster.dir)).toBe(false);
      await cluster.stop();
    }
  }, 60_000);

  it('leaves nothing behind when the test process exits without stopping, or is SIGKILLed', async () => {
    // A child process starts a cluster, prints where, then exits (exit hook) or kills itself (sweep on next start).
    const child = (how: 'exit' | 'kill'): Promise<{ dir: string; pid: number }> =>
      new Promise((resolve, reject) => {
        const script = `
          import { startCluster } from './test/support/pg-cluster.ts';
          const c = await startCluster();
          console.log(JSON.stringify({ dir: c.dir, pid: c.postmasterPid() }));
          ${how === 'exit' ? 'process.exit(3);' : "process.kill(process.pid, 'SIGKILL');"}`;
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectRoot, timeout: 45_000 }, (_error, stdout, stderr) => {
          const line = stdout.split('\n').find((l) => l.startsWith('{'));
          if (line === undefined) reject(new Error(`child printed no cluster: ${stderr}`));
          else resolve(JSON.parse(line) as { dir: string; pid: number });
        });
      });

    const exited = await child('exit');
    expect(existsSync(exited.dir)).toBe(false);
    await eventually(() => !alive(exited.pid), 5_000, 'the orphaned postmaster to die');

    const killed = await child('kill');
    expect(existsSync(killed.dir)).toBe(true);
    expect(alive(killed.pid)).toBe(true);
    const next = await startCluster(); // sweeps what the killed process left
    try {
      expect(existsSync(killed.dir)).toBe(false);
      await eventually(() => !alive(killed.pid), 5_000, 'the orphaned postmaster to die');
    } finally {
      await next.stop();
    }
  }, 60_000);
});

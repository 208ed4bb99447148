/**
 * The Erlang/OTP reference of the nodes suite: compiles erlang/molo_nodes_bench.erl into a temporary
 * directory and, per case, starts a peer VM and a driver VM on loopback (long names, a random
 * cookie, epmd). `ERL` and `ERLC` override the executables; when they are missing, Erlang rows are
 * unavailable.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Row } from '../suite.js';
import { compileErlang, ERL } from '../actors/erlang.js';
import { runProcess } from '../actors/process.js';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'erlang', 'molo_nodes_bench.erl');

export interface ErlangNodes {
  run(name: string, quick: boolean): Promise<Row>;
  dispose(): Promise<void>;
  readonly version: string;
}

export async function startErlangNodes(): Promise<ErlangNodes | { readonly unavailable: string }> {
  const compiled = await compileErlang(SOURCE);
  if ('unavailable' in compiled) return compiled;
  const { dir } = compiled;
  const cookie = randomBytes(12).toString('hex');
  const vm = (name: string): string[] => ['+S', '1:1', '-noshell', '-kernel', 'logger_level', 'none', '-name', `${name}@127.0.0.1`, '-setcookie', cookie, '-pa', dir];
  return {
    version: compiled.version,
    async run(name, quick) {
      const tag = `${process.pid}_${Date.now()}`;
      const peerName = `molo_nb_peer_${tag}`;
      const peer = spawn(ERL, [...vm(peerName), '-eval', 'molo_nodes_bench:peer()'], { stdio: 'ignore' });
      try {
        const args = [...vm(`molo_nb_driver_${tag}`), '-eval', `molo_nodes_bench:main(["${peerName}@127.0.0.1","${name}","${quick ? 'quick' : 'full'}"])`];
        return await runProcess(ERL, args, `erlang ${name}`);
      } finally {
        peer.kill('SIGKILL');
      }
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

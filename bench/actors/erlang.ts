/**
 * The Erlang/OTP reference: compiles erlang/molo_bench.erl with `erlc` into a temporary directory
 * (no .beam ever lands in the repository) and runs each case in its own single-scheduler VM.
 * `ERL` and `ERLC` override the executables; when they are missing, Erlang rows are unavailable.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Row } from '../suite.js';
import { runProcess } from './process.js';
import type { CaseName } from './cases.js';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'erlang', 'molo_bench.erl');
const ERL = process.env.ERL ?? 'erl';
const ERLC = process.env.ERLC ?? 'erlc';
export { ERL };

export interface ErlangRuntime {
  /** Runs one case in a fresh VM; resolves with its row. */
  run(name: CaseName, quick: boolean): Promise<Row>;
  /** Removes the compiled module. */
  dispose(): Promise<void>;
  readonly version: string;
}

/** An Erlang module compiled into a temporary directory, and the OTP release that runs it. */
export interface CompiledErlang {
  readonly dir: string;
  readonly version: string;
}

/** Compiles `source` with `erlc` (no .beam lands in the repository), or explains why Erlang rows are unavailable. */
export async function compileErlang(source: string): Promise<CompiledErlang | { readonly unavailable: string }> {
  const probe = spawnSync(ERL, ['-noshell', '-eval', 'io:put_chars(erlang:system_info(otp_release)), halt().'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    return { unavailable: `\`${ERL}\` not runnable (${probe.error?.message ?? `exit ${probe.status}`})` };
  }
  const dir = await mkdtemp(join(tmpdir(), 'molo-bench-erl-'));
  const compiled = spawnSync(ERLC, ['-o', dir, source], { encoding: 'utf8' });
  if (compiled.error !== undefined || compiled.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    return { unavailable: `\`${ERLC}\` failed: ${compiled.error?.message ?? compiled.stderr.trim()}` };
  }
  return { dir, version: `OTP ${probe.stdout.trim()}` };
}

/** Compiles the module, or explains why Erlang rows are unavailable. */
export async function startErlang(): Promise<ErlangRuntime | { readonly unavailable: string }> {
  const compiled = await compileErlang(SOURCE);
  if ('unavailable' in compiled) return compiled;
  const { dir } = compiled;
  return {
    version: compiled.version,
    async run(name, quick) {
      const args = [
        '+S', '1:1', // one scheduler: Node runs actors on one thread too
        '+P', '2000000', // idle holds 1 M processes (default limit 262,144)
        '-noshell',
        '-kernel', 'logger_level', 'none', // no crash or supervisor reports: Molo's bench systems have logger: false
        '-pa', dir,
        '-eval', `molo_bench:main(["${name}","${quick ? 'quick' : 'full'}"])`,
      ];
      return runProcess(ERL, args, `erlang ${name}`);
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

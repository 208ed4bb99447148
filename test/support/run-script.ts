import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ScriptResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a TypeScript file of the project in a real child process (through tsx). */
export function runScript(path: string, options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; args?: string[] } = {}): Promise<ScriptResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path, ...(options.args ?? [])],
      { cwd: projectRoot, env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 30_000 },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: failure === null ? 0 : typeof failure.code === 'number' ? failure.code : null,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node flags that run a TypeScript file of the project as `npm start` does: tsx, and the package's
 * `molo-source` export condition, so `import 'molo'` (the examples' self-reference) loads src/, not dist/.
 */
export const TS_NODE_ARGS: readonly string[] = ['--conditions=molo-source', '--import', 'tsx'];

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
      [...TS_NODE_ARGS, path, ...(options.args ?? [])],
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

/**
 * Issue 28 §1: an app run through a TypeScript loader gives its thread and process hosts the same
 * loader, so a TypeScript handlers module loads there. From source here (Molo's src/ through the
 * `molo-source` condition); test/package/pack.test.ts runs the same app against the built package.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../support/run-script.js';

const app = fileURLToPath(new URL('./fixtures/ts-app/app.mts', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runApp(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'molo-ts-app-'));
  dirs.push(dir);
  return new Promise((resolve) => {
    execFile(command, [...args, app, dir], { cwd: projectRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('TypeScript handlers in thread and process hosts, from source', () => {
  it('under node --import tsx', async () => {
    const result = await runApp(process.execPath, ['--conditions=molo-source', '--import', 'tsx']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('thread succeeded\nprocess succeeded\n');
  }, 90_000);

  it('under the tsx command', async () => {
    const result = await runApp(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['--conditions=molo-source']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('thread succeeded\nprocess succeeded\n');
  }, 90_000);
});

/**
 * The package as a user gets it: `npm pack` from a clean checkout (no dist/: `prepack` builds it),
 * installed into a fresh app in a temp dir, then imported, required and run there.
 *
 * Offline: the app's package.json points molo's runtime dependencies at this repository's
 * node_modules (`file:` links), so npm resolves everything without the registry; molo itself is
 * installed from the tarball as from a registry. better-sqlite3 is one of those dependencies, so
 * SQLite (the embedded default) works after `npm install molo` alone.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: timeoutMs, env: { ...process.env, npm_config_update_notifier: 'false' } }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: number | string }) | null;
      resolve({ code: failure === null ? 0 : typeof failure.code === 'number' ? failure.code : null, stdout, stderr });
    });
  });
}

const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
  version: string;
  dependencies: Record<string, string>;
};

let dir: string;
let app: string;
let tarball: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'molo-pack-'));
  // A clean checkout: what git tracks that the build needs, and no dist/.
  const checkout = join(dir, 'checkout');
  mkdirSync(checkout);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'LICENSE', 'README.md', 'CHANGELOG.md', 'src']) {
    if (existsSync(join(projectRoot, entry))) cpSync(join(projectRoot, entry), join(checkout, entry), { recursive: true });
  }
  symlinkSync(join(projectRoot, 'node_modules'), join(checkout, 'node_modules'));
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], checkout);
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(dir, readdirSync(dir).find((name) => name.endsWith('.tgz'))!);

  app = join(dir, 'app');
  mkdirSync(app);
  const dependencies: Record<string, string> = { molo: `file:${tarball}` };
  for (const name of Object.keys(pkg.dependencies)) dependencies[name] = `file:${join(projectRoot, 'node_modules', name)}`;
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies }));
  const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--install-links=false', '--ignore-scripts'], app);
  expect(installed.code, installed.stderr).toBe(0);
}, 180_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the packed package, installed into a fresh app', () => {
  it('ships dist (built by prepack), the sources the source maps point at, and LICENSE', () => {
    const installed = join(app, 'node_modules', 'molo');
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/actors/exit.js.map', 'src/actors/exit.ts', 'LICENSE', 'package.json']) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    expect(existsSync(join(app, 'node_modules', 'better-sqlite3')), 'better-sqlite3 installed with molo').toBe(true);
  });

  it('imports as ESM and requires as CommonJS, with every subpath and ./package.json', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', "import { ActorSystem } from 'molo'; import { GenServer } from 'molo/behaviours'; console.log(typeof ActorSystem, typeof GenServer)"], app);
    expect(esm).toMatchObject({ code: 0, stdout: 'function function\n' });
    const cjs = await run(
      process.execPath,
      ['-e', "const m = require('molo'); const d = require('molo/data'); console.log(typeof m.ActorSystem, typeof d.openSqlite, require('molo/package.json').version)"],
      app,
    );
    expect(cjs.stderr).not.toMatch(/Error/);
    expect(cjs).toMatchObject({ code: 0, stdout: `function function ${pkg.version}\n` });
  });

  it('stack traces point at shipped source files', async () => {
    const script = "import { ActorSystem } from 'molo'; try { new ActorSystem({ maxActors: -1 }); } catch (e) { console.log(e.stack.split('\\n')[1]); }";
    const traced = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], app);
    const frame = /\((.*\.ts):\d+:\d+\)/.exec(traced.stdout)?.[1];
    expect(frame, traced.stdout).toMatch(/node_modules\/molo\/src\/actors\/system-options\.ts$/);
    expect(existsSync(frame!)).toBe(true);
  });

  it('SQLite, the embedded default, works with nothing installed but molo', async () => {
    // A file, not `-e`: SQLite runs in worker threads, which inherit the process's flags, and
    // `--input-type` is refused anywhere but with `-e`.
    const script = [
      "import { ActorSystem, openSqlite } from 'molo';",
      'const system = new ActorSystem();',
      "const db = await openSqlite(system, { file: 'app.db' });",
      "await db.query('CREATE TABLE t (n INTEGER)');",
      "await db.query('INSERT INTO t (n) VALUES ($1)', [42]);",
      "console.log(String((await db.query('SELECT n FROM t')).rows[0].n));",
      'await db.close();',
      'system.shutdown();',
    ].join('\n');
    writeFileSync(join(app, 'sqlite.mjs'), script);
    const opened = await run(process.execPath, ['sqlite.mjs'], app);
    expect(opened, opened.stderr).toMatchObject({ code: 0, stdout: '42\n' });
  });

  it('an example copied into the app runs against the installed package (dist), formatTree included', async () => {
    // An ESM folder of the app (the examples use top-level await), as a user's TypeScript app would be.
    const code = join(app, 'code');
    mkdirSync(code);
    writeFileSync(join(code, 'package.json'), JSON.stringify({ type: 'module' }));
    cpSync(join(projectRoot, 'examples', 'gen-server.ts'), join(code, 'gen-server.ts'));
    // No molo-source condition here: `molo/*` resolves to the installed dist, as in a user's app.
    const tsx = join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
    const example = await run(process.execPath, ['--import', pathToFileURL(tsx).href, 'gen-server.ts'], code);
    expect(example.stderr).toBe('');
    expect(example).toMatchObject({ code: 0 });
    expect(example.stdout).toContain('greeting: hello');
    const format = await run(process.execPath, ['--input-type=module', '-e', "import { formatTree } from 'molo/admin'; console.log(typeof formatTree)"], app);
    expect(format).toMatchObject({ code: 0, stdout: 'function\n' });
  });

  it('thread and process hosts load a TypeScript handlers module of an app run under tsx (built form)', async () => {
    // Node 20 runs none of the parent's --import preloads in a worker: without the host replaying
    // the app's loader, the thread host fails with 'Unknown file extension ".mts"'.
    const code = join(app, 'ts-app');
    mkdirSync(code);
    writeFileSync(join(code, 'package.json'), JSON.stringify({ type: 'module' }));
    for (const file of ['app.mts', 'handlers.mts']) cpSync(join(projectRoot, 'test', 'bus', 'tasks', 'fixtures', 'ts-app', file), join(code, file));
    const tsx = join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
    const data = mkdtempSync(join(dir, 'ts-app-data-'));
    const result = await run(process.execPath, ['--import', pathToFileURL(tsx).href, 'app.mts', data], code);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('thread succeeded\nprocess succeeded\n');
  });

  it('molo --version runs from the installed bin', async () => {
    const version = await run(join(app, 'node_modules', '.bin', 'molo'), ['--version'], app);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });
});

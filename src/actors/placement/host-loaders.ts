/**
 * The module loaders a host needs so that it imports what the app's own process imports.
 *
 * A child process inherits `process.execArgv`, so its loaders come with it. A worker thread does
 * not: on Node 20 a worker runs none of the parent's `--import`/`--loader` preloads, and tsx's own
 * entry registers its hooks on the main thread only. So a thread host replays the app's preloads
 * in the worker before its entry loads, with tsx's register API standing in for tsx's entry
 * (`node --import tsx app.ts`, `tsx app.ts`, or a path into a tsx install).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One preload, replayed in a worker in the order the app's process ran them. */
export type ThreadPreload =
  /** A module whose `register()` installs hooks (tsx's ESM API). */
  | { readonly kind: 'register'; readonly url: string }
  /** `--import`: imported for its effects. */
  | { readonly kind: 'import'; readonly url: string }
  /** `--loader`/`--experimental-loader`: hooks given to `module.register`. */
  | { readonly kind: 'loader'; readonly url: string }
  /** `--require`/`-r`: required for its effects. */
  | { readonly kind: 'require'; readonly path: string };

const fromSource = import.meta.url.endsWith('.ts');

/** tsx's ESM register API, resolved from `base` (a file URL or path), or undefined when tsx is not there. */
function tsxRegisterApi(base: string): string | undefined {
  try {
    const manifest = createRequire(base).resolve('tsx/package.json');
    return tsxApiOfPackage(dirname(manifest));
  } catch {
    return undefined;
  }
}

/** The ESM build of tsx's API in the package at `root` (require.resolve would give the CommonJS one). */
function tsxApiOfPackage(root: string): string {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const target = exports['./esm/api']?.import?.default ?? './dist/esm/api/index.mjs';
  return pathToFileURL(join(root, target)).href;
}

/** tsx's `--import` loader for a child process, when Molo itself runs from source. */
export function ownTsxImport(): string | undefined {
  if (!fromSource) return undefined;
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}

/** Where a flag's value names tsx: `tsx`, `tsx/esm`, or a file inside a tsx package's `dist/`. */
function tsxPackageRoot(specifier: string, cwd: string): string | 'bare' | undefined {
  if (specifier === 'tsx' || specifier.startsWith('tsx/')) return 'bare';
  const path = specifier.startsWith('file:') ? decodeURIComponent(new URL(specifier).pathname) : specifier;
  const match = /^(.*[\\/]tsx)[\\/]dist[\\/]/.exec(resolve(cwd, path));
  return match?.[1];
}

/** A relative or absolute path as a file URL (Node resolves preload paths against the cwd); a bare name as is. */
function asUrl(specifier: string, cwd: string): string {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return pathToFileURL(resolve(cwd, specifier)).href;
  return specifier;
}

/** The preload flags of `execArgv`, as (flag, value) pairs, whether written `--flag=v` or `--flag v`. */
function preloadFlags(execArgv: readonly string[]): Array<[string, string]> {
  const flags = new Set(['--import', '--loader', '--experimental-loader', '--require', '-r']);
  const found: Array<[string, string]> = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i]!;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (!flags.has(name)) continue;
    const value = eq === -1 ? execArgv[(i += 1)] : arg.slice(eq + 1);
    if (value !== undefined) found.push([name, value]);
  }
  return found;
}

/**
 * What a worker must run before its entry: Molo's own tsx hooks when it runs from source, then the
 * app's preloads (tsx's replaced by its register API, and only once).
 */
export function threadPreloads(execArgv: readonly string[] = process.execArgv, cwd: string = process.cwd()): ThreadPreload[] {
  const preloads: ThreadPreload[] = [];
  const own = fromSource ? tsxRegisterApi(import.meta.url) : undefined;
  let tsxRegistered = own !== undefined;
  if (own !== undefined) preloads.push({ kind: 'register', url: own });
  for (const [flag, value] of preloadFlags(execArgv)) {
    const tsx = tsxPackageRoot(value, cwd);
    if (tsx !== undefined) {
      // tsx's CLI also preloads a CommonJS file for the main thread's signals: not for a worker.
      if (tsxRegistered || flag === '--require' || flag === '-r') continue;
      const api = tsx === 'bare' ? tsxRegisterApi(pathToFileURL(join(cwd, 'noop.js')).href) : tsxApiOfPackage(tsx);
      if (api !== undefined) {
        preloads.push({ kind: 'register', url: api });
        tsxRegistered = true;
      }
      continue;
    }
    if (flag === '--require' || flag === '-r') preloads.push({ kind: 'require', path: value.startsWith('.') ? resolve(cwd, value) : value });
    else if (flag === '--import') preloads.push({ kind: 'import', url: asUrl(value, cwd) });
    else preloads.push({ kind: 'loader', url: asUrl(value, cwd) });
  }
  return preloads;
}

/**
 * The worker's first script when it has preloads: a worker's execArgv cannot register module hooks
 * before its entry loads, so it replays them here and then imports the entry. Bare names resolve
 * from the cwd, as the app's own flags did.
 */
export const THREAD_BOOT = `
const { workerData } = require('node:worker_threads');
const { register } = require('node:module');
const { pathToFileURL } = require('node:url');
(async () => {
  const parent = pathToFileURL(process.cwd() + '/').href;
  for (const preload of workerData.preloads) {
    if (preload.kind === 'register') (await import(preload.url)).register();
    else if (preload.kind === 'loader') register(preload.url, parent);
    else if (preload.kind === 'require') require(require.resolve(preload.path, { paths: [process.cwd()] }));
    else await import(preload.url);
  }
  await import(workerData.entry);
})().catch((error) => setImmediate(() => { throw error; }));
`;

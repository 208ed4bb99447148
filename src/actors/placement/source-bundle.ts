/**
 * Running from source (tsx, vitest), a worker thread has to register tsx and load each module of
 * the runtime through its hooks: a second or more per thread, and a SQLite database starts three.
 * A thread host that runs only Molo's own modules (asked for with `ownModulesOnly`) loads instead
 * one esbuild bundle of them, made once for each state of the source tree and kept under
 * `node_modules/.cache/molo-hosts/`. Built code (dist/) needs none of this. Anything that keeps a
 * bundle from being made (no esbuild, a read-only tree) leaves the host on tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ThreadPreload } from './host-loaders.js';

/** A bundled host: its entry, and the bundle's file for each source module it was made for. */
export interface HostBundle {
  readonly entry: string;
  readonly modules: Readonly<Record<string, string>>;
}

/** The part of esbuild's API used here (esbuild comes with tsx, which running from source needs anyway). */
interface Esbuild {
  readonly version: string;
  buildSync(options: Record<string, unknown>): unknown;
}

const fromSource = import.meta.url.endsWith('.ts');
const srcRoot = fileURLToPath(new URL('../../', import.meta.url));
const hostMain = join(srcRoot, 'actors', 'placement', 'host-main.ts');
const made = new Map<string, HostBundle | undefined>();

/** The bundle for a host of `moduleUrl` (one of Molo's own modules), or undefined: run the host from source. */
export function ownModulesBundle(moduleUrl: string): HostBundle | undefined {
  if (!fromSource) return undefined;
  if (!made.has(moduleUrl)) {
    let bundle: HostBundle | undefined;
    try {
      bundle = build(moduleUrl);
    } catch {
      bundle = undefined;
    }
    made.set(moduleUrl, bundle);
  }
  return made.get(moduleUrl);
}

function build(moduleUrl: string): HostBundle | undefined {
  if (!moduleUrl.startsWith('file:')) return undefined;
  const modulePath = fileURLToPath(moduleUrl);
  if (!modulePath.startsWith(srcRoot) || !modulePath.endsWith('.ts')) return undefined;
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  const cache = join(srcRoot, '..', 'node_modules', '.cache', 'molo-hosts');
  const dir = join(cache, sourceKey(modulePath, esbuild.version));
  const bundled = (path: string): string => pathToFileURL(join(dir, relative(srcRoot, path).replace(/\.ts$/, '.mjs'))).href;
  const bundle = { entry: bundled(hostMain), modules: { [moduleUrl]: bundled(modulePath) } };
  if (existsSync(join(dir, 'complete'))) return bundle;
  // Built aside and renamed into place, so a process beside this one never loads half a bundle.
  const staging = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  mkdirSync(cache, { recursive: true });
  try {
    esbuild.buildSync({
      entryPoints: [hostMain, modulePath],
      outdir: staging,
      outbase: srcRoot,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    });
    writeFileSync(join(staging, 'complete'), '');
    renameSync(staging, dir);
    pruneStale(cache, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another process put the same bundle in place first: use it.
    if (existsSync(join(dir, 'complete'))) return bundle;
    throw error;
  }
  return bundle;
}

/** Bundles of earlier source states, a day old: a process started since then uses none of them. */
const STALE_MS = 24 * 60 * 60 * 1_000;

function pruneStale(cache: string, current: string): void {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === current) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/** Names the source tree's state: every .ts file's path, size and modification time, the module and esbuild's version. */
function sourceKey(modulePath: string, esbuildVersion: string): string {
  const hash = createHash('sha256').update(`${esbuildVersion}\n${modulePath}\n`);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const stat = statSync(path);
        hash.update(`${relative(srcRoot, path).split(sep).join('/')} ${stat.size} ${stat.mtimeMs}\n`);
      }
    }
  };
  walk(srcRoot);
  return hash.digest('hex').slice(0, 24);
}

/** In a bundled host: the bundle's file for each source module (set by host-main from its start data). */
let moduleMap: Readonly<Record<string, string>> = {};
/** The loaders a module from outside the bundle needs (tsx): replayed on the first such import only. */
let deferredPreloads: readonly ThreadPreload[] = [];
let preloaded: Promise<void> | undefined;

export function useBundledModules(modules: Readonly<Record<string, string>> | undefined, preloads: readonly ThreadPreload[] | undefined): void {
  moduleMap = modules ?? {};
  deferredPreloads = preloads ?? [];
}

/**
 * Imports a behaviour's module in a host: the bundle's copy when it has one. Anything else (a test's
 * fixture spawned beside a database's worker) loads through the app's loaders, registered now; it
 * runs beside the bundle's copy of Molo, so it should share no classes with it (a type import is fine).
 */
export async function importInHost(moduleUrl: string): Promise<Record<string, unknown>> {
  const bundled = moduleMap[moduleUrl];
  if (bundled !== undefined) return (await import(bundled)) as Record<string, unknown>;
  if (deferredPreloads.length > 0) await (preloaded ??= replayPreloads(deferredPreloads));
  return (await import(moduleUrl)) as Record<string, unknown>;
}

async function replayPreloads(preloads: readonly ThreadPreload[]): Promise<void> {
  const parent = pathToFileURL(`${process.cwd()}/`).href;
  const require = createRequire(parent);
  for (const preload of preloads) {
    if (preload.kind === 'register') ((await import(preload.url)) as { register(): void }).register();
    else if (preload.kind === 'loader') register(preload.url, parent);
    else if (preload.kind === 'require') require(require.resolve(preload.path, { paths: [process.cwd()] }));
    else await import(preload.url);
  }
}

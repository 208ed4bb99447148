/**
 * The page's static files: HTML, script and style from `assets/` beside this module (shipped in
 * the package's `src/`), and uPlot's prebuilt browser bundle from node_modules. Read once when the
 * surface starts, so a request never touches the disk; no build step, no CDN.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

/** What the page may weigh in all (its own files and uPlot's); the page test holds it. */
export const MAX_OBSERVER_PAGE_BYTES = 200 * 1024;

export interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

const OWN: Readonly<Record<string, readonly [string, string]>> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/observer/observer-common.js': ['observer-common.js', 'text/javascript; charset=utf-8'],
  '/observer/observer-panels.js': ['observer-panels.js', 'text/javascript; charset=utf-8'],
  '/observer/observer-actions.js': ['observer-actions.js', 'text/javascript; charset=utf-8'],
  '/observer/observer-tasks.js': ['observer-tasks.js', 'text/javascript; charset=utf-8'],
  '/observer/observer.js': ['observer.js', 'text/javascript; charset=utf-8'],
  '/observer/observer.css': ['observer.css', 'text/css; charset=utf-8'],
};

const UPLOT: Readonly<Record<string, readonly [string, string]>> = {
  '/observer/uplot.js': ['uplot/dist/uPlot.iife.min.js', 'text/javascript; charset=utf-8'],
  '/observer/uplot.css': ['uplot/dist/uPlot.min.css', 'text/css; charset=utf-8'],
};

let cached: ReadonlyMap<string, Asset> | undefined;

/** Every file of the page by its URL path. */
export function observerAssets(): ReadonlyMap<string, Asset> {
  if (cached !== undefined) return cached;
  const dir = assetDir();
  const require = createRequire(import.meta.url);
  const assets = new Map<string, Asset>();
  for (const [path, [file, type]] of Object.entries(OWN)) assets.set(path, { body: readFileSync(`${dir}/${file}`), type });
  for (const [path, [module, type]] of Object.entries(UPLOT)) assets.set(path, { body: readFileSync(require.resolve(module)), type });
  cached = assets;
  return assets;
}

/** `assets/` beside this file when run from src; from dist, the copy in the package's src/. */
function assetDir(): string {
  const beside = fileURLToPath(new URL('./assets', import.meta.url));
  if (existsSync(`${beside}/index.html`)) return beside;
  return fileURLToPath(new URL('../../../src/admin/observer/assets', import.meta.url));
}

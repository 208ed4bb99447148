/**
 * Running from source, a thread host of Molo's own modules loads an esbuild bundle of them rather
 * than registering tsx (source-bundle.ts): the bundle is made for Molo's modules only, mirrors the
 * source layout, and a SQLite database (whose threads ask for it) serves through it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownModulesBundle } from '../../../src/actors/placement/source-bundle.js';
import { openTemp } from '../../data/sqlite/support.js';
import { testSystem } from '../../support/systems.js';

const workerUrl = new URL('../../../src/data/sqlite/worker.ts', import.meta.url).href;

describe('the own-modules bundle of a thread host', () => {
  it('is made for a module of Molo own source: an entry and the module, both on disk, the same on a second ask', () => {
    const bundle = ownModulesBundle(workerUrl);
    expect(bundle).toBeDefined();
    expect(bundle!.entry).toMatch(/\/node_modules\/\.cache\/molo-hosts\/[0-9a-f]{24}\/actors\/placement\/host-main\.mjs$/);
    const bundled = bundle!.modules[workerUrl];
    expect(bundled).toMatch(/\/data\/sqlite\/worker\.mjs$/);
    expect(existsSync(fileURLToPath(bundle!.entry))).toBe(true);
    expect(existsSync(fileURLToPath(bundled!))).toBe(true);
    expect(existsSync(join(fileURLToPath(new URL('../..', bundle!.entry)), 'complete'))).toBe(true);
    expect(ownModulesBundle(workerUrl)).toBe(bundle);
  });

  it('is not made for modules outside Molo source: an app module, a package, a path that is not TypeScript', () => {
    expect(ownModulesBundle(pathToFileURL(join(fileURLToPath(import.meta.url), '..', 'fixtures', 'echo.ts')).href)).toBeUndefined();
    expect(ownModulesBundle('better-sqlite3')).toBeUndefined();
    expect(ownModulesBundle(new URL('../../../package.json', import.meta.url).href)).toBeUndefined();
  });

  it('a SQLite database, whose threads ask for it, serves reads and writes through the bundled hosts', async () => {
    const system = testSystem();
    const temp = await openTemp(system, { readers: 1 });
    try {
      await temp.db.query('CREATE TABLE t (v TEXT)');
      await temp.db.query("INSERT INTO t (v) VALUES ('x')");
      expect((await temp.db.query('SELECT v FROM t')).rows).toEqual([{ v: 'x' }]);
      expect(temp.db.health().healthy).toBe(true);
    } finally {
      await temp.dispose();
      await system.shutdown();
    }
  });
});

/** Which of the app's preload flags a thread host replays, and how (the real runs: test/bus/tasks/ts-handlers.test.ts). */
import { describe, expect, it } from 'vitest';
import { threadPreloads } from '../../../src/actors/placement/host-loaders.js';

const app = '/srv/app';
const appPreloads = (execArgv: string[]) => threadPreloads(execArgv, app).slice(own().length);
const own = () => threadPreloads([], app);

describe('thread host preloads', () => {
  it('replays --import, --loader and --require in order, written either way, resolved against the cwd', () => {
    expect(appPreloads(['--import=./setup.mjs', '--experimental-loader', 'my-loader', '-r', './env.cjs', '--max-old-space-size=64'])).toEqual([
      { kind: 'import', url: 'file:///srv/app/setup.mjs' },
      { kind: 'loader', url: 'my-loader' },
      { kind: 'require', path: '/srv/app/env.cjs' },
    ]);
  });

  it("replaces tsx's entry by its register API, once, and skips its CommonJS preflight", () => {
    const tsxRoot = new URL('../../../node_modules/tsx/', import.meta.url).pathname;
    const cli = ['--require', `${tsxRoot}dist/preflight.cjs`, '--import', `file://${tsxRoot}dist/loader.mjs`, '--import', 'tsx'];
    const preloads = threadPreloads(cli, app);
    const registers = preloads.filter((preload) => preload.kind === 'register');
    expect(registers).toHaveLength(1);
    expect(preloads).toHaveLength(1);
    expect(registers[0]!.url).toMatch(/tsx\/dist\/esm\/api\/index\.mjs$/);
  });

  it('has nothing to replay for an app run without loaders', () => {
    expect(appPreloads(['--enable-source-maps', '--conditions=x'])).toEqual([]);
  });
});

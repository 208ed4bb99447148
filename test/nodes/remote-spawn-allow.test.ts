/**
 * The `remoteSpawn` allow-list holds against a peer that has the secret: URLs that leave the
 * allowed directory by `..`, `%2e%2e`, an encoded `/`, a symlink (to a file or to a directory), a
 * sibling directory sharing the prefix, or that are not `file:` URLs at all are refused with
 * RemoteSpawnRefused, and the module outside is never imported (its top-level code would write a
 * marker file). A module inside the directory still spawns.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BehaviourModule } from '../../src/actors/index.js';
import { InvalidNodeOption, RemoteSpawnRefused } from '../../src/nodes/index.js';
import { testNode } from './support.js';

let root: string;
let markers: string;

/** A module whose top-level code leaves `markers/<name>` behind: proof it was imported. */
function evilModule(path: string, name: string): void {
  writeFileSync(
    path,
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(markers, name))}, 'imported');\nexport function make() { return () => {}; }\n`,
  );
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'molo-spawn-allow-'));
  markers = join(root, 'markers');
  mkdirSync(markers);
  mkdirSync(join(root, 'allowed'));
  mkdirSync(join(root, 'allowed-evil'));
  writeFileSync(join(root, 'allowed', 'ok.mjs'), `export function make(reply) { return (message) => { if (message && message.reply) message.reply(reply); }; }\n`);
  for (const name of ['dotdot', 'pct', 'slash', 'link', 'dirlink', 'path']) evilModule(join(root, `evil-${name}.mjs`), name);
  evilModule(join(root, 'allowed-evil', 'evil.mjs'), 'sibling');
  symlinkSync(join(root, 'evil-link.mjs'), join(root, 'allowed', 'link.mjs'));
  symlinkSync(root, join(root, 'allowed', 'up'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const spec = (moduleUrl: string): BehaviourModule => ({ moduleUrl, exportName: 'make', args: [] });

describe('remoteSpawn allow-list', () => {
  it('refuses every URL that leads outside the allowed directory, and imports none of them', async () => {
    const allowed = pathToFileURL(join(root, 'allowed')).href; // no trailing slash: `allowed-evil` must not match
    const b = await testNode('b', { remoteSpawn: [allowed] });
    const a = await testNode('a');
    await a.connect(b.name);
    const base = `${allowed}/`;
    const attacks: Record<string, string> = {
      dotdot: `${base}../evil-dotdot.mjs`,
      pct: `${base}%2e%2e/evil-pct.mjs`,
      pctUpper: `${base}%2E%2E/evil-pct.mjs`,
      slash: `${base}..%2fevil-slash.mjs`,
      link: `${base}link.mjs`,
      dirlink: `${base}up/evil-dirlink.mjs`,
      sibling: pathToFileURL(join(root, 'allowed-evil', 'evil.mjs')).href,
      path: `${join(root, 'allowed')}/../evil-path.mjs`,
      data: `data:text/javascript,import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(join(markers, 'data'))}, 'x'); export function make() { return () => {}; }`,
      http: 'http://127.0.0.1:9/evil.mjs',
      query: `${base}ok.mjs?x=1`,
    };
    const outcomes: Record<string, string> = {};
    for (const [name, url] of Object.entries(attacks)) {
      const result = await a.spawn(b.name, spec(url)).then(
        () => 'spawned',
        (error: unknown) => (error as { code?: string }).code ?? String(error),
      );
      outcomes[name] = result;
    }
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(attacks).map((name) => [name, RemoteSpawnRefused.code])));
    expect(readdirSync(markers)).toEqual([]);
    // The legit module still spawns, and answers.
    const ok = await a.spawn(b.name, spec(`${base}ok.mjs`));
    expect(ok?.node).toBe(b.name);
    expect(await a.system.call(ok!, { reply: true })).toBeUndefined();
    // In a thread too: the host imports the checked real path's URL.
    const inThread = await a.spawn(b.name, spec(`${base}ok.mjs`), { placement: 'thread' });
    expect(inThread?.node).toBe(b.name);
    expect(inThread!.creation).not.toBe(ok!.creation);
    expect(existsSync(join(markers, 'dotdot'))).toBe(false);
  });

  it('says why, and a node with remoteSpawn off refuses with the same error', async () => {
    const allowed = pathToFileURL(join(root, 'allowed')).href;
    const b = await testNode('b', { remoteSpawn: [allowed] });
    const closed = await testNode('closed');
    const a = await testNode('a');
    await a.connect(b.name);
    await a.connect(closed.name);
    const refused = (await a.spawn(b.name, spec(`${allowed}/../evil-dotdot.mjs`)).catch((error: unknown) => error)) as Error & { code: string };
    expect(refused).toMatchObject({ name: 'RemoteSpawnRefused', code: RemoteSpawnRefused.code });
    expect(refused.message).toContain('outside');
    const off = (await a.spawn(closed.name, spec(`${allowed}/ok.mjs`)).catch((error: unknown) => error)) as Error & { code: string };
    expect(off).toMatchObject({ name: 'RemoteSpawnRefused', code: RemoteSpawnRefused.code });
    expect(off.message).toContain('remoteSpawn');
    expect(readdirSync(markers)).toEqual([]);
  });

  it('takes only file: URLs or absolute paths as allowed directories', async () => {
    await expect(testNode('x', { remoteSpawn: ['http://example.com/'] })).rejects.toBeInstanceOf(InvalidNodeOption);
    await expect(testNode('x', { remoteSpawn: ['some-package/'] })).rejects.toBeInstanceOf(InvalidNodeOption);
  });
});

/** package.json's links are URLs npm and registries can use. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  engines: { node: string };
};

describe('package.json links', () => {
  it('repository, homepage and bugs are valid https URLs', () => {
    expect(pkg.repository.type).toBe('git');
    const repository = new URL(pkg.repository.url.replace(/^git\+/, ''));
    expect(repository.protocol).toBe('https:');
    expect(repository.pathname).toMatch(/^\/[\w.-]+\/[\w.-]+\.git$/);
    for (const link of [pkg.homepage, pkg.bugs.url]) expect(new URL(link).protocol).toBe('https:');
    expect(new URL(pkg.bugs.url).pathname).toBe(`${repository.pathname.replace(/\.git$/, '')}/issues`);
  });
});

describe('package.json engines', () => {
  // `require('molo')` loads the ESM build through require(esm), unflagged from Node 20.19 and 22.12
  // (test/package/pack.test.ts requires the installed package); older Nodes would need a CommonJS build.
  it('states the require(esm) floor, and the Node running the tests is above it', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect((major === 20 && minor >= 19) || major > 22 || (major === 22 && minor >= 12)).toBe(true);
  });
});

describe('package.json peers', () => {
  // The rooms' Socket.IO adapter loads socket.io-adapter beside the app's socket.io (socketio-adapter.ts):
  // an optional peer, so apps without Socket.IO install nothing extra and npm warns on a wrong major.
  it('declares socket.io 4.8 as an optional peer, matching the version the tests run', () => {
    const manifest = pkg as unknown as { peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional: boolean }>; devDependencies: Record<string, string> };
    expect(manifest.peerDependencies['socket.io']).toBe('^4.8.0');
    expect(manifest.peerDependenciesMeta['socket.io']?.optional).toBe(true);
    expect(manifest.devDependencies['socket.io']).toMatch(/^4\.8\./);
  });
});

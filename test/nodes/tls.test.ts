/**
 * Links over TLS with certificate verification both ways: certificates made for the test by
 * `openssl` (a throwaway CA in a temp dir). A node whose certificate another CA signed is refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRequest } from '../../src/actors/index.js';
import type { NodeTlsOptions } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

let dir: string;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, and a certificate it signs for 127.0.0.1 (server and client use). */
function authority(name: string): NodeTlsOptions {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}-ca.key`, '-out', `${name}-ca.crt`, '-days', '1', '-subj', `/CN=${name} test CA`);
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name} node`);
  writeFileSync(join(dir, `${name}.ext`), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${name}-ca.crt`, '-CAkey', `${name}-ca.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  return { key: read(`${name}.key`), cert: read(`${name}.crt`), ca: read(`${name}-ca.crt`) };
}

let cluster: NodeTlsOptions;
let rogue: NodeTlsOptions;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-tls-'));
  cluster = authority('cluster');
  rogue = authority('rogue');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('nodes over TLS', () => {
  it('two nodes with certificates from the cluster CA link and call', async () => {
    const a = await testNode('a', { tls: cluster });
    const b = await testNode('b', { tls: cluster });
    b.system.spawn((message) => void (message instanceof CallRequest && message.reply(['tls', message.request])), { name: 'echo' });
    await a.connect(b.name);
    expect(await a.callNamed('echo', b.name, 1)).toEqual(['tls', 1]);
  });

  it('a node with a certificate from another CA is refused, both ways; the node keeps running', async () => {
    const a = await testNode('a', { tls: cluster });
    const b = await testNode('b', { tls: cluster });
    const intruder = await testNode('x', { tls: { ...rogue } });
    await expect(intruder.connect(a.name)).rejects.toMatchObject({ reason: 'tls' });
    await expect(a.connect(intruder.name)).rejects.toMatchObject({ reason: 'tls' });
    intruder.disconnect(a.name);
    a.disconnect(intruder.name);
    await eventually(() => (a.stats().handshakesRefused.tls ?? 0) >= 2);
    await a.connect(b.name);
    expect(a.nodes()).toEqual([b.name]);
  });

  it('a plain TCP peer gets nowhere with a TLS node', async () => {
    const a = await testNode('a', { tls: cluster, handshakeTimeoutMs: 500 });
    const plain = await testNode('p');
    await expect(plain.connect(a.name)).rejects.toBeDefined();
    plain.disconnect(a.name);
    expect(a.nodes()).toEqual([]);
  });
});

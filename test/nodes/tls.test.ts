/**
 * Links over TLS with certificate verification both ways: certificates made for the test by
 * `openssl` (a throwaway CA in a temp dir). A node whose certificate another CA signed is refused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CallRequest } from '../../src/actors/index.js';
import type { NodeTlsOptions } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';
import { authority } from './tls-certs.js';

let cluster: NodeTlsOptions;
let rogue: NodeTlsOptions;

beforeAll(() => {
  cluster = authority('cluster');
  rogue = authority('rogue');
});

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
    const refused = await a.connect(intruder.name).catch((thrown: unknown) => thrown);
    expect(refused).toMatchObject({ reason: 'tls' });
    // The TLS library's error stays on it: its code in the message, itself as the cause.
    const cause = (refused as Error & { cause?: NodeJS.ErrnoException }).cause;
    expect(cause).toBeInstanceOf(Error);
    expect(cause?.code).toMatch(/^[A-Z_]+$/);
    expect((refused as Error).message).toContain(`(tls): ${cause?.code}: ${cause?.message}`);
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

import { afterEach, describe, expect, it } from 'vitest';
import { Discovery, dnsNodes, InvalidNodeOption, type Node } from '../../../src/nodes/index.js';
import { eventually } from '../../support/systems.js';
import { testNode } from '../support.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';

let dns: TestDnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

/** Nodes `app@127.0.0.<n>:port` on one port (as instances behind a headless service), retried on a taken port. */
async function nodesOnOnePort(hosts: readonly string[]): Promise<{ port: number; nodes: Node[] }> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    const nodes: Node[] = [];
    try {
      for (const host of hosts) nodes.push(await testNode(`app@${host}:${port}`));
      return { port, nodes };
    } catch (error) {
      await Promise.all(nodes.map((node) => node.stop()));
      if (attempt >= 10) throw error;
    }
  }
}

describe('DNS discovery', () => {
  it('A records: connects the instances that appear and lets go of the ones that vanish', async () => {
    dns = await startDnsServer();
    const { port, nodes } = await nodesOnOnePort(['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const [self, second, third] = nodes as [Node, Node, Node];
    dns.records.a.set('molo.test', ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const ref = await Discovery.start(self, { strategy: dnsNodes({ query: 'molo.test', nodeName: 'app', port, servers: [dns.address] }), intervalMs: 100 });

    await eventually(() => self.isConnected(second.name) && self.isConnected(third.name), 10_000, 'both peers connected');
    expect((await Discovery.status(self.system, ref)).nodes).toEqual([second.name, third.name].sort());

    dns.records.a.set('molo.test', ['127.0.0.2', '127.0.0.3']);
    await eventually(() => !self.isConnected(third.name), 10_000, 'the vanished instance let go');
    const status = await Discovery.status(self.system, ref);
    expect(status).toMatchObject({ strategy: 'dns', nodes: [second.name], failures: 0 });
    // Let go for good: no reconnect attempt brings it back while DNS no longer lists it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(self.isConnected(third.name)).toBe(false);
    expect(self.isConnected(second.name)).toBe(true);
    expect(dns.queries.every((query) => query === 'A molo.test')).toBe(true);
  });

  it('SRV records: host and port per instance, each target resolved to its address', async () => {
    dns = await startDnsServer();
    const self = await testNode('app');
    const one = await testNode('app');
    const two = await testNode('app');
    const portOf = (node: Node): number => Number(node.name.split(':').pop());
    dns.records.srv.set('_molo._tcp.test', [
      { target: 'one.test', port: portOf(one) },
      { target: 'two.test', port: portOf(two) },
      { target: 'self.test', port: portOf(self) },
    ]);
    for (const host of ['one.test', 'two.test', 'self.test']) dns.records.a.set(host, ['127.0.0.1']);
    const ref = await Discovery.start(self, { strategy: dnsNodes({ query: '_molo._tcp.test', record: 'SRV', nodeName: 'app', servers: [dns.address] }), intervalMs: 100 });
    await eventually(() => self.isConnected(one.name) && self.isConnected(two.name), 10_000, 'SRV targets connected');
    expect((await Discovery.status(self.system, ref)).nodes).toEqual([one.name, two.name].sort());
  });

  it('a resolver that fails is a counted, logged round, not a crash; the next good round connects', async () => {
    dns = await startDnsServer();
    const self = await testNode('app');
    const peer = await testNode('app');
    const ref = await Discovery.start(self, {
      strategy: dnsNodes({ query: 'missing.test', record: 'SRV', nodeName: 'app', servers: [dns.address] }),
      intervalMs: 100,
      maxFailures: 1_000,
    });
    await eventually(() => dns!.queries.length >= 2, 10_000, 'two rounds');
    const failing = await Discovery.status(self.system, ref);
    expect(failing.failures).toBeGreaterThanOrEqual(1);
    expect(failing.lastError).toMatch(/ENOTFOUND|missing\.test/);
    dns.records.srv.set('missing.test', [{ target: 'peer.test', port: Number(peer.name.split(':').pop()) }]);
    dns.records.a.set('peer.test', ['127.0.0.1']);
    await eventually(() => self.isConnected(peer.name), 10_000, 'connected once DNS answers');
    expect((await Discovery.status(self.system, ref)).failures).toBe(0);
  });

  it('refuses bad options with the setting named', () => {
    expect(() => dnsNodes({ query: 'x', nodeName: 'app' })).toThrow(/discovery\.dns\.port/);
    expect(() => dnsNodes({ query: 'x', nodeName: 'app', port: 1, timeout: 5 } as never)).toThrow(/discovery\.dns\.timeout: unknown option; did you mean timeoutMs\?/);
    expect(() => dnsNodes({ query: 'x', nodeName: 'a b', port: 1 })).toThrow(InvalidNodeOption);
  });
});

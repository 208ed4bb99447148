/**
 * DNS discovery, as a Kubernetes headless service gives it: an A query lists the instances' IPs
 * (all listening on one port), an SRV query lists host and port per instance (each target resolved
 * to its A records). Node names are `${nodeName}@<ip>:<port>`, so every instance must name itself by
 * its IP (e.g. the pod IP from the downward API), since the handshake checks the name a peer claims.
 */
import { Resolver } from 'node:dns/promises';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { InvalidNodeOption } from '../errors.js';
import type { DiscoveryStrategy } from './strategy.js';

export interface DnsDiscoveryOptions {
  /** The name to query (`molo.default.svc.cluster.local`). */
  readonly query: string;
  /** `A` (default): IPv4 addresses, all on `port`; `SRV`: targets and ports from the records. */
  readonly record?: 'A' | 'SRV';
  /** The name part of every discovered node (`app` in `app@10.0.0.7:4370`). */
  readonly nodeName: string;
  /** The port every instance listens on (required for `A`, ignored for `SRV`). */
  readonly port?: number;
  /** Resolvers to ask (`host` or `host:port`); the system's when omitted. */
  readonly servers?: readonly string[];
  /** One query's timeout (default 2,000 ms; 100..30,000). */
  readonly timeoutMs?: number;
}

const KNOWN: readonly (keyof DnsDiscoveryOptions)[] = ['query', 'record', 'nodeName', 'port', 'servers', 'timeoutMs'];
/** A hostile or broken DNS answer cannot make the node dial more than this many addresses. */
export const DNS_MAX_RECORDS = 1_024;

export function dnsNodes(options: DnsDiscoveryOptions): DiscoveryStrategy {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new InvalidNodeOption(`discovery.dns.${unknown.key}`, unknown.detail);
  const record = options.record ?? 'A';
  if (record !== 'A' && record !== 'SRV') throw new InvalidNodeOption('discovery.dns.record', "must be 'A' or 'SRV'");
  if (typeof options.query !== 'string' || options.query.length === 0) throw new InvalidNodeOption('discovery.dns.query', 'must be a non-empty name');
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(options.nodeName ?? '')) throw new InvalidNodeOption('discovery.dns.nodeName', 'must be 1..100 of [A-Za-z0-9_.-]');
  if (record === 'A' && !(Number.isInteger(options.port) && options.port! >= 1 && options.port! <= 65_535)) {
    throw new InvalidNodeOption('discovery.dns.port', 'an A query needs the instances’ port (1..65535)');
  }
  const timeoutMs = options.timeoutMs ?? 2_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 30_000) throw new InvalidNodeOption('discovery.dns.timeoutMs', 'must be an integer in 100..30000');
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (options.servers !== undefined) resolver.setServers([...options.servers]);
  const name = options.nodeName;

  const addresses = async (host: string): Promise<string[]> => ((await resolver.resolve4(host)) as string[]).slice(0, DNS_MAX_RECORDS);
  return {
    kind: 'dns',
    async list() {
      if (record === 'A') return (await addresses(options.query)).map((ip) => `${name}@${ip}:${options.port!}`);
      const found: string[] = [];
      for (const srv of (await resolver.resolveSrv(options.query)).slice(0, DNS_MAX_RECORDS)) {
        for (const ip of await addresses(srv.name)) found.push(`${name}@${ip}:${srv.port}`);
        if (found.length >= DNS_MAX_RECORDS) break;
      }
      return found.slice(0, DNS_MAX_RECORDS);
    },
  };
}

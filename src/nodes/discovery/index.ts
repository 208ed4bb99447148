export { staticNodes, type DiscoveryStrategy } from './strategy.js';
export { dnsNodes, DNS_MAX_RECORDS, type DnsDiscoveryOptions } from './dns.js';
export { postgresRegistry, REGISTRY_MAX_NODES, type PostgresRegistryOptions } from './postgres-registry.js';
export { Discovery, DiscoveryServer, DISCOVERY_CAPS, type DiscoveryOptions, type DiscoveryStatus } from './discovery-server.js';

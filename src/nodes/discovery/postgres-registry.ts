/**
 * A registry in the shared Postgres: each instance announces itself every round with an expiry of
 * `ttlMs`, and lists the instances whose announcement has not expired. Expiry is read on the
 * server's clock (`now()`), so instances whose clocks disagree still agree on who is alive; an
 * instance that was SIGKILLed stops renewing and drops out within `ttlMs`.
 */
import { unknownOptionKey } from '../../actors/option-keys.js';
import type { Database } from '../../data/database.js';
import { InvalidNodeOption } from '../errors.js';
import type { DiscoveryStrategy } from './strategy.js';

export interface PostgresRegistryOptions {
  readonly db: Database;
  /** Instances of one cluster share this name (default `default`). */
  readonly cluster?: string;
  /** How long an announcement lives (default 15,000 ms; 1,000..600,000). Renewed every discovery round. */
  readonly ttlMs?: number;
}

const KNOWN: readonly (keyof PostgresRegistryOptions)[] = ['db', 'cluster', 'ttlMs'];
/** At most this many live instances are listed per cluster (the discovery actor's own cap is lower or equal). */
export const REGISTRY_MAX_NODES = 16_384;
/** Expired rows kept this long after expiry before a round deletes them (for operators reading the table). */
const EXPIRED_KEPT_MS = 60_000;

const SCHEMA = `CREATE TABLE IF NOT EXISTS molo_node_registry (
  cluster text NOT NULL,
  node text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (cluster, node)
)`;

export function postgresRegistry(options: PostgresRegistryOptions): DiscoveryStrategy {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new InvalidNodeOption(`discovery.postgres.${unknown.key}`, unknown.detail);
  const { db } = options;
  if (db?.backend !== 'postgres') throw new InvalidNodeOption('discovery.postgres.db', 'must be a Postgres database (the registry is shared by instances)');
  const cluster = options.cluster ?? 'default';
  if (typeof cluster !== 'string' || cluster.length === 0 || cluster.length > 200) throw new InvalidNodeOption('discovery.postgres.cluster', 'must be 1..200 characters');
  const ttlMs = options.ttlMs ?? 15_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 1_000 || ttlMs > 600_000) throw new InvalidNodeOption('discovery.postgres.ttlMs', 'must be an integer in 1000..600000');

  let created: Promise<unknown> | undefined;
  const ready = (): Promise<unknown> => (created ??= db.query(SCHEMA).catch((error: unknown) => {
    created = undefined;
    throw error;
  }));
  return {
    kind: 'postgres',
    async announce(self) {
      await ready();
      await db.query(
        `INSERT INTO molo_node_registry (cluster, node, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (cluster, node) DO UPDATE SET expires_at = excluded.expires_at`,
        [cluster, self, ttlMs],
      );
    },
    async list() {
      await ready();
      await db.query(`DELETE FROM molo_node_registry WHERE cluster = $1 AND expires_at < now() - $2 * interval '1 millisecond'`, [cluster, EXPIRED_KEPT_MS]);
      const { rows } = await db.query<{ node: string }>(
        `SELECT node FROM molo_node_registry WHERE cluster = $1 AND expires_at > now() ORDER BY node LIMIT ${REGISTRY_MAX_NODES}`,
        [cluster],
      );
      return rows.map((row) => row.node);
    },
    async withdraw(self) {
      await ready();
      await db.query('DELETE FROM molo_node_registry WHERE cluster = $1 AND node = $2', [cluster, self]);
    },
  };
}

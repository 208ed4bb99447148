/**
 * Where a Postgres configuration comes from, as pg and postgres.js users expect: an object, a
 * connection URL (`postgres://` or `postgresql://`, libpq's query parameters), `DATABASE_URL` and
 * the libpq `PG*` environment variables.
 *
 * Precedence, per field, highest first (libpq's, with the object on top):
 *   1. a field of the configuration object (`host`, `user`, `ssl`, ...);
 *   2. the URL: `url` in the object, or the string passed instead of an object;
 *      otherwise `DATABASE_URL`, when the object names no server (neither `host` nor `url`);
 *   3. the `PG*` variables: PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE,
 *      PGAPPNAME, PGCONNECT_TIMEOUT, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY;
 *   4. the defaults: 127.0.0.1, 5432, the OS user, the database named like the user.
 * `env: false` ignores the environment (2's DATABASE_URL and 3).
 *
 * A URL is never echoed in an error (it may hold a password): errors name the part that is wrong.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { userInfo } from 'node:os';
import { InvalidDataConfig } from './errors.js';
import type { PgConfig } from './pg/index.js';

/** What `createPostgresPool` accepts besides the object fields: a URL and the environment to read. */
export interface PostgresSource {
  /** `postgres://user:password@host:port/database?sslmode=require&application_name=app`. */
  readonly url?: string;
  /** The environment for `DATABASE_URL` and `PG*`; default `process.env`; `false` reads none. */
  readonly env?: Readonly<Record<string, string | undefined>> | false;
}

/** sslmode values as libpq spells them. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** Every PgConfig field, held complete by the compiler: a new option must be listed to be accepted by the pool. */
const PG_FIELDS: { readonly [K in keyof PgConfig]-?: true } = {
  host: true,
  port: true,
  user: true,
  database: true,
  password: true,
  ssl: true,
  allowMd5: true,
  allowCleartext: true,
  requireAuth: true,
  connectTimeoutMs: true,
  applicationName: true,
  params: true,
  statementCacheSize: true,
  maxInFlight: true,
  maxQueued: true,
  types: true,
  metrics: true,
};
export const PG_CONFIG_KEYS: readonly string[] = Object.keys(PG_FIELDS);

const URL_SCHEME = /^postgres(ql)?:\/\//i;

/** The libpq query parameters a URL may carry; any other one is refused, as libpq does. */
const URL_PARAMS = new Set(['host', 'hostaddr', 'port', 'user', 'password', 'dbname', 'sslmode', 'application_name', 'connect_timeout', 'sslrootcert', 'sslcert', 'sslkey']);

type Fields = { -readonly [K in keyof PgConfig]?: PgConfig[K] };

/**
 * A `PgConfig` from an object (with an optional `url`), a URL string, or nothing (the
 * environment). Fields other than the connection's (pool options, say) pass through unchanged.
 */
export function postgresConfig<T extends Partial<PgConfig> & PostgresSource>(input?: T | string): Omit<T, 'url' | 'env'> & PgConfig {
  if (input !== undefined && typeof input !== 'string' && (input === null || typeof input !== 'object' || Array.isArray(input))) {
    throw new InvalidDataConfig('pg', 'give a configuration object or a postgres:// URL');
  }
  const object = (typeof input === 'string' ? { url: input } : (input ?? {})) as Partial<PgConfig> & PostgresSource & Record<string, unknown>;
  const { url, env: envOption, ...fields } = object;
  if (envOption !== undefined && envOption !== false && (envOption === null || typeof envOption !== 'object')) {
    throw new InvalidDataConfig('pg.env', 'must be an environment object or false');
  }
  const env = envOption === false ? {} : (envOption ?? process.env);
  if (url !== undefined && typeof url !== 'string') throw new InvalidDataConfig('pg.url', 'must be a postgres:// URL string');
  const databaseUrl = env['DATABASE_URL'];
  const fromUrl = url !== undefined ? parsePostgresUrl(url, 'pg.url') : fields.host === undefined && databaseUrl ? parsePostgresUrl(databaseUrl, 'DATABASE_URL') : {};
  const fromEnv = fromEnvironment(env);
  const merged: Fields = { ...fromEnv, ...fromUrl };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  if (merged.user === undefined) merged.user = osUser();
  return merged as Omit<T, 'url' | 'env'> & PgConfig;
}

/** The connection fields of a `postgres://` URL (libpq's URI form, one host). */
export function parsePostgresUrl(text: string, option = 'pg.url'): Fields {
  if (!URL_SCHEME.test(text)) throw new InvalidDataConfig(option, 'must start with postgres:// or postgresql://');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidDataConfig(option, 'is not a valid URL (percent-encode special characters in the user and password)');
  }
  const out: Fields = {};
  const host = decode(url.hostname, `${option} host`).replace(/^\[(.*)\]$/, '$1');
  if (host.includes(',') || url.host.includes(',')) throw new InvalidDataConfig(option, 'several hosts are not supported; give one');
  if (host !== '') out.host = host;
  if (url.port !== '') out.port = Number(url.port);
  if (url.username !== '') out.user = decode(url.username, `${option} user`);
  if (url.password !== '') out.password = decode(url.password, `${option} password`);
  const database = decode(url.pathname.replace(/^\//, ''), `${option} database`);
  if (database !== '') out.database = database;
  const ssl: SslFiles = {};
  for (const [key, value] of url.searchParams) {
    if (!URL_PARAMS.has(key)) throw new InvalidDataConfig(`${option} parameter ${key}`, `unknown; known: ${[...URL_PARAMS].join(', ')}`);
    applyKeyword(out, ssl, key, value, `${option} parameter ${key}`);
  }
  const tls = sslOptions(ssl, option);
  if (tls !== undefined) out.ssl = tls;
  return out;
}

/** libpq's environment variables and the connection keyword each stands for. */
const ENV_KEYWORDS: readonly (readonly [string, string])[] = [
  ['PGHOST', 'host'],
  ['PGPORT', 'port'],
  ['PGUSER', 'user'],
  ['PGPASSWORD', 'password'],
  ['PGDATABASE', 'dbname'],
  ['PGAPPNAME', 'application_name'],
  ['PGCONNECT_TIMEOUT', 'connect_timeout'],
  ['PGSSLMODE', 'sslmode'],
  ['PGSSLROOTCERT', 'sslrootcert'],
  ['PGSSLCERT', 'sslcert'],
  ['PGSSLKEY', 'sslkey'],
];

function fromEnvironment(env: Readonly<Record<string, string | undefined>>): Fields {
  const out: Fields = {};
  const ssl: SslFiles = {};
  for (const [name, keyword] of ENV_KEYWORDS) {
    const value = env[name];
    if (value !== undefined && value !== '') applyKeyword(out, ssl, keyword, value, name);
  }
  const tls = sslOptions(ssl, 'PGSSL*');
  if (tls !== undefined) out.ssl = tls;
  return out;
}

/** One libpq connection keyword (from a URL parameter or a variable) onto the config, or the TLS files. */
function applyKeyword(out: Fields, ssl: SslFiles, keyword: string, value: string, option: string): void {
  switch (keyword) {
    case 'host':
    case 'hostaddr':
      out.host = value;
      return;
    case 'port':
      out.port = portNumber(value, option);
      return;
    case 'user':
      out.user = value;
      return;
    case 'password':
      out.password = value;
      return;
    case 'dbname':
      out.database = value;
      return;
    case 'application_name':
      out.applicationName = value;
      return;
    case 'connect_timeout':
      out.connectTimeoutMs = seconds(value, option);
      return;
    case 'sslmode':
      ssl.mode = sslMode(value, option);
      return;
    case 'sslrootcert':
      ssl.rootcert = value;
      return;
    case 'sslcert':
      ssl.cert = value;
      return;
    case 'sslkey':
      ssl.key = value;
      return;
  }
}

interface SslFiles {
  mode?: SslMode | undefined;
  rootcert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

/**
 * libpq's sslmode as TLS options. Molo has no opportunistic TLS: `allow` and `prefer` connect
 * without it (say `require` to get it); `require` encrypts without checking the certificate, as
 * libpq does without a root certificate; `verify-ca` checks the chain; `verify-full` also the name.
 */
function sslOptions(files: SslFiles, option: string): false | ConnectionOptions | undefined {
  const mode = files.mode;
  if (mode === undefined && files.rootcert === undefined) return undefined;
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return false;
  const tls: { -readonly [K in keyof ConnectionOptions]: ConnectionOptions[K] } = {};
  // libpq: a root certificate without sslmode means verify-ca.
  const effective = mode ?? 'verify-ca';
  if (effective === 'require' && files.rootcert === undefined) tls.rejectUnauthorized = false;
  if (effective === 'verify-ca' || (effective === 'require' && files.rootcert !== undefined)) tls.checkServerIdentity = () => undefined;
  if (files.rootcert !== undefined) tls.ca = readPem(files.rootcert, `${option} sslrootcert`);
  if (files.cert !== undefined) tls.cert = readPem(files.cert, `${option} sslcert`);
  if (files.key !== undefined) tls.key = readPem(files.key, `${option} sslkey`);
  return tls;
}

function readPem(path: string, option: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidDataConfig(option, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

function sslMode(value: string, option: string): SslMode {
  if (!(SSL_MODES as readonly string[]).includes(value)) throw new InvalidDataConfig(option, `${JSON.stringify(value)} is not one of ${SSL_MODES.join(', ')}`);
  return value as SslMode;
}

function portNumber(value: string, option: string): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 1 && port <= 65_535)) throw new InvalidDataConfig(option, `${JSON.stringify(value)} is not a port (1..65535)`);
  return port;
}

/** libpq's connect_timeout: whole seconds, 0 meaning none (here: the cap). */
function seconds(value: string, option: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidDataConfig(option, `${JSON.stringify(value)} is not a number of seconds`);
  const ms = Number(value) * 1_000;
  return ms === 0 ? 120_000 : Math.max(2_000, Math.min(ms, 120_000));
}

function decode(text: string, option: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new InvalidDataConfig(option, 'has a malformed percent-encoding');
  }
}

function osUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

import { createRequire } from 'node:module';

/** Molo's version, from its package.json (two levels up from both src/cli and dist/cli). */
export function moloVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

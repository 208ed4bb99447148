/** Refusing option keys nobody reads, as data errors (see actors/option-keys.ts). */
import { unknownOptionKey } from '../actors/option-keys.js';
import { InvalidDataConfig } from './errors.js';

/** Throws InvalidDataConfig (`<scope>.<key>`) for the first key of `options` not in `known`, naming the nearest known key. */
export function refuseUnknownKeys(scope: string, options: object, known: readonly string[]): void {
  const unknown = unknownOptionKey(options, known);
  if (unknown !== undefined) throw new InvalidDataConfig(`${scope}.${unknown.key}`, unknown.detail);
}

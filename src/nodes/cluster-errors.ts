/**
 * Errors of the cluster services built on node links: the global registry, process groups and
 * cluster-wide topics. Stable codes, never reused; each has a row in docs/errors.md.
 */
import { codedError } from '../actors/coded-error.js';
import { unknownOptionKey } from '../actors/option-keys.js';

export const ClusterErrorCode = {
  GlobalNameTaken: 'NODE_GLOBAL_NAME_TAKEN',
  GlobalNameNotFound: 'NODE_GLOBAL_NAME_NOT_FOUND',
  InvalidArgument: 'NODE_CLUSTER_INVALID_ARGUMENT',
  LimitReached: 'NODE_CLUSTER_LIMIT_REACHED',
} as const;
export type ClusterErrorCode = (typeof ClusterErrorCode)[keyof typeof ClusterErrorCode];

/** `global.register` found the name held (here or on a connected node), or lost the race for it. */
export class GlobalNameTaken extends codedError(ClusterErrorCode.GlobalNameTaken, (globalName: string, holder: string | undefined) => ({
  message: `global name '${globalName.slice(0, 256)}' is taken${holder === undefined ? '' : ` (by ${holder})`}`,
  fields: { globalName, holder },
})) {}

/** `global.send` / `global.call` to a name nobody holds. */
export class GlobalNameNotFound extends codedError(ClusterErrorCode.GlobalNameNotFound, (globalName: string) => ({
  message: `no actor holds the global name '${globalName.slice(0, 256)}'`,
  fields: { globalName },
})) {}

/** A name, group or ref given to a cluster service is not valid (empty, too long, not a local actor, …); `argument` names it. */
export class InvalidClusterArgument extends codedError(ClusterErrorCode.InvalidArgument, (argument: string, detail: string) => ({
  message: `invalid ${argument}: ${detail}`,
  fields: { argument },
})) {}

/** A cluster service is at one of its caps; `cap` names the option. */
export class ClusterLimitReached extends codedError(ClusterErrorCode.LimitReached, (cap: string, limit: number) => ({
  message: `cluster limit reached: ${cap} = ${limit}`,
  fields: { cap, limit },
})) {}

/** Names, groups: 1..256 characters. */
export const MAX_CLUSTER_NAME_LENGTH = 256;

export function checkClusterName(argument: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLUSTER_NAME_LENGTH) {
    throw new InvalidClusterArgument(argument, `must be a string of 1..${MAX_CLUSTER_NAME_LENGTH} characters`);
  }
  return value;
}

/** An option of a cluster service: its default, or an integer in range (InvalidClusterArgument naming it otherwise). */
export function boundedOption(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < min || chosen > max) throw new InvalidClusterArgument(`option ${option}`, `must be an integer in ${min}..${max}`);
  return chosen;
}

/** The options object of a cluster service has only `known` keys (InvalidClusterArgument naming the first other, with the nearest known one). */
export function checkServiceOptions(options: object, known: readonly string[]): void {
  const unknown = unknownOptionKey(options, known);
  if (unknown !== undefined) throw new InvalidClusterArgument(`option ${unknown.key}`, unknown.detail);
}

import { unknownOptionKey } from '../actors/option-keys.js';
import type { Ref } from '../actors/index.js';
import { resolveChildSpec, type AutoShutdown, type ResolvedChildSpec } from './child-spec.js';
import { InvalidSupervisorSpec } from './errors.js';
import {
  DEFAULT_INTENSITY,
  DEFAULT_MAX_CHILDREN,
  DEFAULT_PERIOD_MS,
  MAX_CHILDREN_CAP,
  MAX_INTENSITY,
  type Strategy,
  type SupervisorSpec,
} from './supervisor-protocol.js';

/** A supervisor's flags and children, validated and with every default applied. */
export interface SupervisorSettings {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly periodMs: number;
  readonly maxChildren: number;
  readonly autoShutdown: AutoShutdown;
  readonly children: readonly ResolvedChildSpec[];
  readonly parent: Ref | undefined;
}

const STRATEGIES = ['one_for_one', 'one_for_all', 'rest_for_one', 'simple_one_for_one'];
const AUTO_SHUTDOWNS = ['never', 'any_significant', 'all_significant'];

/** OTP's check_flags and check_startspec: validated once, errors naming the flag and the value given. */
/** The keys of a SupervisorSpec: a misspelt one (`period`) would leave its default in force. */
const SUPERVISOR_SPEC_KEYS: readonly (keyof SupervisorSpec)[] = ['strategy', 'intensity', 'periodMs', 'maxChildren', 'children', 'autoShutdown'];

export function resolveSupervisorSpec(spec: SupervisorSpec, parent: Ref | undefined): SupervisorSettings {
  if (spec === null || typeof spec !== 'object') throw new InvalidSupervisorSpec('spec', 'must be an object', spec);
  const unknown = unknownOptionKey(spec, SUPERVISOR_SPEC_KEYS);
  if (unknown !== undefined) throw new InvalidSupervisorSpec(unknown.key, unknown.detail, (spec as unknown as Record<string, unknown>)[unknown.key]);
  const strategy = spec.strategy ?? 'one_for_one';
  if (!STRATEGIES.includes(strategy)) throw new InvalidSupervisorSpec('strategy', `unknown strategy ${String(strategy)}`, strategy);
  const intensity = spec.intensity ?? DEFAULT_INTENSITY;
  if (!Number.isInteger(intensity) || intensity < 0 || intensity > MAX_INTENSITY) {
    throw new InvalidSupervisorSpec('intensity', `must be an integer in 0..${MAX_INTENSITY}, got ${intensity}`, intensity);
  }
  const periodMs = spec.periodMs ?? DEFAULT_PERIOD_MS;
  if (!Number.isFinite(periodMs) || periodMs <= 0) throw new InvalidSupervisorSpec('periodMs', `must be positive, got ${periodMs}`, periodMs);
  const maxChildren = spec.maxChildren ?? DEFAULT_MAX_CHILDREN;
  if (!Number.isInteger(maxChildren) || maxChildren < 1 || maxChildren > MAX_CHILDREN_CAP) {
    throw new InvalidSupervisorSpec('maxChildren', `must be an integer in 1..${MAX_CHILDREN_CAP}, got ${maxChildren}`, maxChildren);
  }
  const autoShutdown: AutoShutdown = spec.autoShutdown ?? 'never';
  if (!AUTO_SHUTDOWNS.includes(autoShutdown)) {
    throw new InvalidSupervisorSpec('autoShutdown', `must be never, any_significant or all_significant, got ${String(autoShutdown)}`, autoShutdown);
  }
  if (autoShutdown !== 'never' && strategy === 'simple_one_for_one') {
    // OTP's {bad_combination, [{auto_shutdown, _}, {strategy, simple_one_for_one}]}.
    throw new InvalidSupervisorSpec('autoShutdown', 'simple_one_for_one supervisors take only autoShutdown never', autoShutdown);
  }
  // OTP's supervisor requires the list (it may be empty): a missing one is a mistake, not "no children".
  if (!Array.isArray(spec.children)) throw new InvalidSupervisorSpec('children', 'required: a list of child specs ([] for none)', spec.children);
  const children = spec.children.map((child) => resolveChildSpec(child, autoShutdown));
  if (strategy === 'simple_one_for_one' && children.length !== 1) {
    throw new InvalidSupervisorSpec('children', 'simple_one_for_one takes exactly one child spec (the template)', children.length);
  }
  if (children.length > maxChildren) throw new InvalidSupervisorSpec('children', `more than maxChildren (${maxChildren})`, children.length);
  const ids = new Set<string>();
  for (const child of children) {
    if (ids.has(child.id)) throw new InvalidSupervisorSpec('children', `duplicate child id '${child.id}'`, child.id);
    ids.add(child.id);
  }
  return { strategy, intensity, periodMs, maxChildren, autoShutdown, children, parent };
}

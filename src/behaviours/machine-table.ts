import type { AnyStateMachine } from 'xstate';

/**
 * Compiles a flat xstate machine (its states one level deep, every transition naming a target) into
 * a lookup table, once. The machine stays the single source of truth for which transitions exist;
 * hot paths consult the table (a property read) instead of interpreting the machine per event
 * (about 10 µs each). The child lifecycle and the task lifecycle are both compiled here; each keeps
 * a test that holds its table to its machine for every state and event.
 */

/** One possible outcome of an event in a state: taken if its guard (if any) holds. */
export interface MachineCandidate<S extends string, G extends string> {
  readonly guard: G | undefined;
  readonly target: S;
  /** Names of the machine's named actions on this transition, so a runner can mirror their effect. */
  readonly actions: readonly string[];
}

export type MachineTable<S extends string, E extends string, G extends string> = Readonly<
  Record<S, Readonly<Partial<Record<E, readonly MachineCandidate<S, G>[]>>>>
>;

/**
 * Reads the machine's own transition definitions for `states` into a table. Throws (a programming
 * error, at module load) when the machine lacks a listed state or has a state the list lacks, or a
 * transition without a target: the table would silently disagree with the machine.
 */
export function compileMachineTable<S extends string, E extends string, G extends string>(
  machine: AnyStateMachine,
  states: readonly S[],
): MachineTable<S, E, G> {
  const id = machine.id;
  for (const state of Object.keys(machine.root.states)) {
    if (!states.includes(state as S)) throw new Error(`${id} machine has state ${state} that the table does not list`);
  }
  const table = {} as Record<S, Partial<Record<E, MachineCandidate<S, G>[]>>>;
  for (const state of states) {
    const node = machine.root.states[state];
    if (node === undefined) throw new Error(`${id} machine lacks state ${state}`);
    const row: Partial<Record<E, MachineCandidate<S, G>[]>> = {};
    for (const [eventType, definitions] of node.transitions) {
      row[eventType as E] = definitions.map((definition) => {
        const target = definition.target?.[0]?.key;
        if (target === undefined) throw new Error(`${id} transition ${state}.${eventType} has no target`);
        const guard = definition.guard as { type?: string } | string | undefined;
        const guardName = typeof guard === 'string' ? guard : guard?.type;
        const actions = (definition.actions as readonly unknown[]).flatMap((action) => {
          const name = typeof action === 'string' ? action : (action as { type?: unknown } | undefined)?.type;
          return typeof name === 'string' ? [name] : [];
        });
        return { guard: guardName as G | undefined, target: target as S, actions };
      });
    }
    table[state] = row;
  }
  return table;
}

/**
 * The transition `event` takes in `state`, evaluating guards (by name) with `guard`; undefined when
 * the machine has no enabled transition. Callers turn undefined into their own typed error.
 */
export function lookupCandidate<S extends string, E extends string, G extends string>(
  table: MachineTable<S, E, G>,
  state: S,
  event: E,
  guard: (name: G) => boolean,
): MachineCandidate<S, G> | undefined {
  const candidates = table[state][event];
  if (candidates === undefined) return undefined;
  for (const candidate of candidates) {
    if (candidate.guard === undefined || guard(candidate.guard)) return candidate;
  }
  return undefined;
}

/** The target state of {@link lookupCandidate}, or undefined. */
export function lookupTransition<S extends string, E extends string, G extends string>(...lookup: Parameters<typeof lookupCandidate<S, E, G>>): S | undefined {
  return lookupCandidate(...lookup)?.target;
}

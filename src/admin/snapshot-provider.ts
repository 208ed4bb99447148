import type { ActorRuntime, Ref } from '../actors/index.js';
import { STREAM_CONSUMER_BEHAVIOUR, StreamConsumer } from '../bus/index.js';

/**
 * Describes processes the Supervisor API does not cover, through their own public status API.
 * The tree walk asks a provider about every process whose `ProcessInfo.behaviour` equals
 * `behaviour`; what it answers goes to the snapshot's `sections[section]`, one entry per process.
 *
 * startNode wires the program supervisor in by default (`programsProvider(ProgramSupervisor.status)`);
 * other kinds of process are one line more in its `snapshotProviders` option.
 */
export interface SnapshotProvider {
  /** The `ProcessInfo.behaviour` this provider describes, such as `ProgramSupervisor`. */
  readonly behaviour: string;
  /** The key under the snapshot's `sections` that collects its entries, such as `programs`. */
  readonly section: string;
  /** Reads the process's status through its public API; bounded by the snapshot's call timeout. */
  describe(system: ActorRuntime, ref: Ref): unknown;
  /**
   * The process also answers `Supervisor.status` (it is a Supervisor underneath): walk its children
   * too. Default false: a provided process is a leaf of the tree.
   */
  readonly descend?: boolean;
}

/**
 * The behaviour name the program supervisor runs under: its `ProcessInfo.behaviour`, which for a
 * GenServer is the server's class name.
 */
export const PROGRAM_SUPERVISOR_BEHAVIOUR = 'ProgramSupervisorServer';

/**
 * The provider for supervised OS programs and their health: pass the program supervisor's public
 * status function, `programsProvider(ProgramSupervisor.status)`. Entries land in `sections.programs`.
 */
export function programsProvider(
  status: (system: ActorRuntime, ref: Ref) => unknown,
  options: { readonly behaviour?: string; readonly descend?: boolean } = {},
): SnapshotProvider {
  return {
    behaviour: options.behaviour ?? PROGRAM_SUPERVISOR_BEHAVIOUR,
    section: 'programs',
    describe: status,
    descend: options.descend ?? false,
  };
}

/**
 * The provider for durable stream consumers (StreamConsumer actors): their stream, consumer, lag and
 * pending count land in `sections.streams`. Part of every node's snapshot by default.
 */
export function streamConsumersProvider(status: (system: ActorRuntime, ref: Ref) => unknown = StreamConsumer.status): SnapshotProvider {
  return { behaviour: STREAM_CONSUMER_BEHAVIOUR, section: 'streams', describe: status, descend: false };
}

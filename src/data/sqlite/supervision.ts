/**
 * The worker threads of one database under a supervisor: the writer first, then the readers, each
 * a placed GenServer in a thread host of its own (`<name>.writer`, `<name>.reader.<i>`). When a
 * thread dies its actor exits with `{ shutdown: { thread_exit: code } }`; the supervisor starts it
 * again (permanent children), and the start function hands the new actor to the channel.
 */
import { behaviourModule, type ActorRuntime, type Ref } from '../../actors/index.js';
import { GenServer, Supervisor, type ChildSpec } from '../../behaviours/index.js';
import type { WorkerChannel } from './channel.js';
import type { WorkerOptions } from './protocol.js';
import type { SqliteTelemetry } from './telemetry.js';
import type { SqliteWorker } from './worker.js';

/** Under tsx or vitest this module is a .ts file, built it is .js: the worker module is its sibling either way. */
const workerModule = new URL(`./worker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);

/** The window of the supervisor's restart intensity. */
export const RESTART_PERIOD_MS = 10_000;
/** How long a worker gets to close its handle at shutdown before it is killed. */
const WORKER_SHUTDOWN_MS = 5_000;

export interface WorkerSlot {
  readonly id: string;
  readonly host: string;
  readonly channel: WorkerChannel;
  readonly options: WorkerOptions;
}

export interface Supervision {
  /** The current supervisor (a new one each time an application's tree starts the database's child again). */
  supervisor: Ref;
  /** Set once close() began: exits from then on are expected. */
  stopping: boolean;
}

function childSpec(slot: WorkerSlot, telemetry: SqliteTelemetry, supervision: { stopping: boolean }): ChildSpec {
  return {
    id: slot.id,
    restart: 'permanent',
    shutdown: WORKER_SHUTDOWN_MS,
    start: async ({ system, parent }) => {
      const ref = await GenServer.startPlaced(system, behaviourModule<SqliteWorker>(workerModule, 'sqliteWorker', slot.options), {
        placement: 'thread',
        host: slot.host,
        // Its threads run nothing but the worker module: from source they load a bundle, not tsx.
        ownModulesOnly: true,
        link: parent,
        // Trapping, it runs terminate (closing the handle, which checkpoints) when the supervisor stops it.
        trapExit: true,
      });
      const generation = slot.channel.generation;
      slot.channel.attach(ref);
      if (generation > 0) telemetry.restarted(slot.id, generation + 1);
      void system.exited(ref).then((reason) => {
        slot.channel.detach(ref, reason);
        if (!supervision.stopping) telemetry.exited(slot.id, reason);
      });
      return ref;
    },
  };
}

/** Starts the supervisor and every worker; rejects (with StartFailed) if one cannot open the file. */
export async function superviseWorkers(
  system: ActorRuntime,
  slots: readonly WorkerSlot[],
  maxRestarts: number,
  telemetry: SqliteTelemetry,
  onGiveUp: (reason: unknown) => void,
  placement: {
    readonly name: string;
    readonly link?: Ref;
    readonly state?: { stopping: boolean };
    /** Children started after the threads (the checkpoint ticker), so stopped before them. */
    readonly extraChildren?: readonly ChildSpec[];
  },
): Promise<Supervision> {
  const state = placement.state ?? { stopping: false };
  const supervisor = await Supervisor.start(system, {
    strategy: 'one_for_one',
    intensity: maxRestarts,
    periodMs: RESTART_PERIOD_MS,
    children: [...slots.map((slot) => childSpec(slot, telemetry, state)), ...(placement.extraChildren ?? [])],
  }, { name: placement.name, ...(placement.link === undefined ? {} : { link: placement.link }) });
  const supervision: Supervision = Object.assign(state, { supervisor });
  void system.exited(supervisor).then((reason) => {
    if (!supervision.stopping) onGiveUp(reason);
  });
  return supervision;
}

export async function stopWorkers(system: ActorRuntime, supervision: Supervision): Promise<void> {
  supervision.stopping = true;
  if (!system.isAlive(supervision.supervisor)) return;
  try {
    await Supervisor.stop(system, supervision.supervisor);
  } catch {
    // Already gone (the system is shutting down): its workers went with it.
  }
}

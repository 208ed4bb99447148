/**
 * The two task queue stores for tests that make identical assertions on both: the stream tests'
 * backends (a SQLite file in a fresh temp directory, a fresh Postgres database), each `open`
 * getting a queue on a table prefix of its own.
 */
import type { Clock } from '../../../src/actors/index.js';
import { openTaskQueue, type SqlTaskQueue, type TaskQueueOptions } from '../../../src/bus/index.js';
import { sleep } from '../../support/systems.js';
import { STREAM_BACKENDS, type StreamBackendCase } from '../streams/stores.js';

export interface TaskBackendCase extends Omit<StreamBackendCase, 'open'> {
  /** A queue store on a fresh table prefix (or `options.table`, to reopen one). */
  open(clock?: Clock, options?: TaskQueueOptions): Promise<SqlTaskQueue>;
}

let prefixes = 0;
export const nextTaskPrefix = (): string => `tq${process.pid}_${++prefixes}`;

function taskCase(base: StreamBackendCase): TaskBackendCase {
  return {
    name: base.name,
    setup: () => base.setup(),
    teardown: () => base.teardown(),
    get db() {
      return base.db;
    },
    get pg() {
      return base.pg;
    },
    get file() {
      return base.file;
    },
    open: (clock, options = {}) => openTaskQueue(base.db, { table: nextTaskPrefix(), ...options, ...(clock === undefined ? {} : { clock }) }),
  };
}

export const TASK_BACKENDS: readonly TaskBackendCase[] = STREAM_BACKENDS.map(taskCase);

/** Polls `read` (a store read) until `done` holds of its value (or 20 s pass), and returns the last value. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (const deadline = Date.now() + 20_000; !done(value) && Date.now() < deadline; ) value = await sleep(20).then(read);
  return value;
}

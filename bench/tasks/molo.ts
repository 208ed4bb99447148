/**
 * Molo's task queue as contenders (SQLite and Postgres; `loop` and `thread` handlers). Empty until
 * the queue and its workers land (openTaskQueue, startTaskWorkers): the peers run meanwhile.
 */
import type { ActorSystem } from '../../src/actors/index.js';
import type { BenchServer } from '../data/server.js';
import type { TaskContender } from './contender.js';

export function moloContenders(_system: ActorSystem, _pg: BenchServer | undefined): TaskContender[] {
  return [];
}

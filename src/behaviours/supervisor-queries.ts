import type { Ref } from '../actors/index.js';
import type { ResolvedChildSpec } from './child-spec.js';
import type { LifecycleState } from './lifecycle.js';
import type { ChildCounts, ChildEntry } from './supervisor-protocol.js';

/** A supervisor's record of one child: plain data, changed only by the runner. */
export interface ChildRecord {
  readonly key: string;
  readonly spec: ResolvedChildSpec;
  readonly args: readonly unknown[];
  ref: Ref | undefined;
  /** The ref it had before it last exited: a dynamic child being restarted is still known by it (OTP's {restarting, Pid}). */
  lastRef: Ref | undefined;
  state: LifecycleState;
  /** Times started after the first start. */
  restartCount: number;
  started: boolean;
  /** Restarts in a row, for the backoff delay; reset once the child outlives `backoff.maxMs`. */
  backoffLevel: number;
  startedAt: number;
}

/** OTP's which_children entry for one child: `restarting` between a failed restart and its retry. */
export function childEntry(record: ChildRecord, dynamic: boolean): ChildEntry {
  return {
    id: dynamic ? undefined : record.key,
    ref: record.state === 'backoff' ? 'restarting' : record.ref,
    type: record.spec.type,
  };
}

/**
 * OTP's count_children. A simple_one_for_one supervisor has one spec (its template) however many
 * children it runs; its supervisors/workers count the children by the template's type.
 */
export function countChildren(records: Iterable<ChildRecord>, dynamic: boolean): ChildCounts {
  let total = 0;
  let active = 0;
  let supervisors = 0;
  for (const record of records) {
    total++;
    if (record.ref !== undefined) active++;
    if (record.spec.type === 'supervisor') supervisors++;
  }
  return { specs: dynamic ? 1 : total, active, supervisors, workers: total - supervisors };
}

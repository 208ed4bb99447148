import type { ActorRuntime, ExitReason, Ref } from '../actors/index.js';
import { registerWireClass } from '../actors/placement/wire-classes.js';

/** OTP's system stop message: the behaviour runs its terminate step and exits with `reason`. */
export class StopRequest {
  constructor(readonly reason: ExitReason) {}
}
// A stop request to a server in a thread or process arrives as one.
registerWireClass({
  Class: StopRequest,
  type: 0x51,
  write: (request) => [request.reason],
  read: (data) => new StopRequest((data as [ExitReason])[0]),
});

/** Asks a GenServer or Supervisor to stop; resolves with its exit reason (`noproc` if not alive). */
export function requestStop(system: ActorRuntime, target: Ref | string, reason: ExitReason): Promise<ExitReason> {
  const ref = typeof target === 'string' ? system.whereis(target) : target;
  if (ref === undefined) return Promise.resolve('noproc');
  const exited = system.exited(ref);
  system.send(ref, new StopRequest(reason));
  return exited;
}

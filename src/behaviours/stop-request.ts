import type { ActorRuntime, ExitReason, Ref } from '../actors/index.js';

/** OTP's system stop message: the behaviour runs its terminate step and exits with `reason`. */
export class StopRequest {
  constructor(readonly reason: ExitReason) {}
}

/** Asks a GenServer or Supervisor to stop; resolves with its exit reason (`noproc` if not alive). */
export function requestStop(system: ActorRuntime, target: Ref | string, reason: ExitReason): Promise<ExitReason> {
  const ref = typeof target === 'string' ? system.whereis(target) : target;
  if (ref === undefined) return Promise.resolve('noproc');
  const exited = system.exited(ref);
  system.send(ref, new StopRequest(reason));
  return exited;
}

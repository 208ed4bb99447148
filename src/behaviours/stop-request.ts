import type { ActorRuntime, ExitReason, Ref } from '../actors/index.js';
import { registerWireClass } from '../actors/placement/wire-classes.js';
import { StopTimeout } from './errors.js';
import { checkTimeoutOrInfinity } from './start-actor.js';

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

/**
 * Asks a GenServer, StateMachine or Supervisor to stop; resolves with its exit reason (`noproc` if
 * not alive). With `timeoutMs` (OTP's stop/3), rejects with StopTimeout if it has not exited by then;
 * the target is left running, as OTP leaves it. Undefined or Infinity: wait as long as it takes.
 */
export function requestStop(system: ActorRuntime, target: Ref | string, reason: ExitReason, timeoutMs?: number): Promise<ExitReason> {
  try {
    if (timeoutMs !== undefined) checkTimeoutOrInfinity('timeoutMs', timeoutMs);
  } catch (error) {
    return Promise.reject(error);
  }
  const ref = typeof target === 'string' ? system.whereis(target) : target;
  if (ref === undefined) return Promise.resolve('noproc');
  const exited = system.exited(ref);
  system.send(ref, new StopRequest(reason));
  if (timeoutMs === undefined || timeoutMs === Infinity) return exited;
  return new Promise((resolve, reject) => {
    const timer = system.clock.setTimer(() => reject(new StopTimeout(target, timeoutMs)), timeoutMs);
    void exited.then((exitReason) => {
      system.clock.clearTimer(timer);
      resolve(exitReason);
    });
  });
}

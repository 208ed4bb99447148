import { createEmptyActor, type AnyActorRef, type AnyActorScope, type EventObject, type ExecutableActionObject } from 'xstate';
import type { ActorContext } from '../../actors/index.js';
import { UnsupportedMachineFeature } from '../errors.js';
import type { Timeouts } from './timeouts.js';

export interface ScopeOptions {
  readonly ctx: ActorContext;
  readonly timeouts: Timeouts;
  readonly onEmit: ((ctx: ActorContext, event: never) => void) | undefined;
  readonly logger: (...args: unknown[]) => void;
}

/** The xstate side of one StateMachine actor: the scope its machine transitions in. */
export interface MachineScope {
  readonly scope: AnyActorScope;
  /** The `self` the machine's actions see; `self.send(event)` queues `event` in the actor's mailbox. */
  readonly self: AnyActorRef;
  /** Runs the work xstate deferred to the end of a transition (emitted events). */
  flush(): void;
}

/**
 * Builds the ActorScope the runner passes to `machine.transition`, so the runner, not an xstate
 * Actor, executes every action: user actions run at once (an exception crashes the actor), and
 * xstate's delayed sends and cancels become the actor's own timers. xstate child actors (`invoke`,
 * `spawnChild`) are refused: a child belongs in the Molo supervision tree, spawned from an effect.
 */
export function createMachineScope(options: ScopeOptions): MachineScope {
  const { ctx, timeouts } = options;
  // A never-started xstate actor: only an identity for `self` and an xstate system for the args.
  const self = createEmptyActor() as AnyActorRef;
  self.send = (event: EventObject) => ctx.send(ctx.self, event);
  const deferred: (() => void)[] = [];

  const execute = (action: ExecutableActionObject): void => {
    switch (action.type) {
      case 'xstate.raise': {
        const { event, delay, id } = action.params as { event: EventObject; delay?: number; id?: string };
        // An undelayed raise is already on xstate's internal queue.
        if (typeof delay === 'number') timeouts.setDelayed(id, delay, event);
        return;
      }
      case 'xstate.sendTo': {
        const { to, event, delay, id } = action.params as { to: unknown; event: EventObject; delay?: number; id?: string };
        if (to !== self) {
          throw new UnsupportedMachineFeature(
            'sendTo',
            'only the machine itself is an xstate actor here; send with effect((actor) => actor.ctx.send(ref, message))',
          );
        }
        if (typeof delay === 'number') timeouts.setDelayed(id, delay, event);
        else ctx.send(ctx.self, event);
        return;
      }
      case 'xstate.cancel':
        timeouts.cancelDelayed((action.params as { sendId: string }).sendId);
        return;
      case 'xstate.spawnChild':
        throw new UnsupportedMachineFeature(
          'invoke and spawnChild',
          'spawn Molo actors instead, with effect((actor) => actor.ctx.spawnLink(...))',
        );
      default:
        // User actions, log, emit, stopChild (a no-op without children).
        action.exec?.(action.info, action.params);
    }
  };

  const scope: AnyActorScope = {
    self,
    id: self.id,
    sessionId: self.sessionId,
    logger: options.logger,
    defer: (fn) => void deferred.push(fn),
    emit: (event) => options.onEmit?.(ctx, event as never),
    system: self.system,
    stopChild: () => {},
    actionExecutor: execute,
  };

  return {
    scope,
    self,
    flush() {
      let fn: (() => void) | undefined;
      while ((fn = deferred.shift()) !== undefined) fn();
    },
  };
}

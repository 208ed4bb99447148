import { DownMessage, ExitMessage, RECEIVE_TIMEOUT, type ActorContext, type ExitReason, type Ref } from '../actors/index.js';
import type { ShutdownPolicy } from './child-spec.js';

const isExitFrom =
  (ref: Ref) =>
  (message: unknown): message is ExitMessage =>
    message instanceof ExitMessage && message.from.equals(ref);

const isDownOf =
  (monitor: number) =>
  (message: unknown): message is DownMessage =>
    message instanceof DownMessage && message.monitor === monitor;

/**
 * OTP's supervisor shutdown of one child: unlink (taking an EXIT already queued, which means it
 * is dead), then `kill` for brutal_kill, or `shutdown` and wait up to the policy's time before
 * `kill`. Resolves with the reason the child exited with. A local child that does not trap exits
 * dies synchronously, so that common case answers without waiting (a group restart of 1,000
 * children must not pay a mailbox round trip each).
 */
export function shutdownChild(ctx: ActorContext, ref: Ref, policy: ShutdownPolicy): ExitReason | Promise<ExitReason> {
  ctx.unlink(ref);
  if (!ctx.system.isAlive(ref)) return takeQueuedExit(ctx, ref);
  const signal = policy === 'brutal_kill' ? 'kill' : 'shutdown';
  if (ref.creation !== ctx.self.creation) {
    // Placed in another thread or process: the exit lands later, so monitor first.
    const monitor = ctx.monitor(ref);
    ctx.exit(ref, signal);
    return awaitDown(ctx, ref, monitor, policy);
  }
  // Local: a child that does not trap exits is gone as soon as exit returns; nothing runs in
  // between on this thread, so the monitor is only needed for one that survived the signal.
  ctx.exit(ref, signal);
  if (!ctx.system.isAlive(ref)) return signal === 'kill' ? 'killed' : 'shutdown';
  return awaitDown(ctx, ref, ctx.monitor(ref), policy);
}

async function takeQueuedExit(ctx: ActorContext, ref: Ref): Promise<ExitReason> {
  const queuedExit = await ctx.receive(isExitFrom(ref), 0);
  return queuedExit === RECEIVE_TIMEOUT ? 'noproc' : queuedExit.reason;
}

async function awaitDown(ctx: ActorContext, ref: Ref, monitor: number, policy: ShutdownPolicy): Promise<ExitReason> {
  const timeout = typeof policy === 'number' ? policy : undefined;
  const down = await ctx.receive(isDownOf(monitor), timeout);
  if (down !== RECEIVE_TIMEOUT) return down.reason;
  // It ignored the shutdown (it traps exits and did not stop in time): kill is not trappable.
  ctx.exit(ref, 'kill');
  const killed = await ctx.receive(isDownOf(monitor));
  return killed === RECEIVE_TIMEOUT ? 'killed' : killed.reason;
}

/**
 * Shuts many children down at once (dynamic children have no order): all get `shutdown` (or
 * `kill`) together, and stragglers are killed when the shared deadline passes.
 */
export async function shutdownAll(ctx: ActorContext, refs: readonly Ref[], policy: ShutdownPolicy): Promise<void> {
  const monitors = new Map<number, Ref>();
  for (const ref of refs) {
    ctx.unlink(ref);
    if (!ctx.system.isAlive(ref)) continue;
    monitors.set(ctx.monitor(ref), ref);
    ctx.exit(ref, policy === 'brutal_kill' ? 'kill' : 'shutdown');
  }
  const deadline = typeof policy === 'number' ? ctx.now() + policy : Infinity;
  const isOurDown = (message: unknown): message is DownMessage =>
    message instanceof DownMessage && monitors.has(message.monitor);
  while (monitors.size > 0) {
    const remaining = deadline - ctx.now();
    const down = await ctx.receive(isOurDown, remaining === Infinity ? undefined : Math.max(0, remaining));
    if (down === RECEIVE_TIMEOUT) {
      for (const ref of monitors.values()) ctx.exit(ref, 'kill');
      continue;
    }
    monitors.delete(down.monitor);
  }
  // Drop EXITs the children sent before they were unlinked.
  for (const ref of refs) while ((await ctx.receive(isExitFrom(ref), 0)) !== RECEIVE_TIMEOUT);
}

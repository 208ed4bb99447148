/**
 * Which frames a system may send about whom. A frame from another system speaks only for that
 * system's actors: it may message anyone, but links, exits, monitors, DOWNs, replies and names must
 * name one of its own actors as their source, and lifetime frames (HostDown, Spawn, Stop) come only
 * from a host's parent, which the caller trusts without asking.
 */
import type { Ref } from '../ref.js';
import { FrameKind, type Frame } from './frames.js';

/** Between a system and its hosts, a system's actors are those of its creation. */
const sameCreation = (ref: Ref, from: number): boolean => ref.creation === from;

/**
 * True when `frame`, from the system of creation `from`, is about that system's own actors.
 * `calleeOf(id)` is the callee of the pending call `id` (a reply must come from its system);
 * `owns(ref, from)` says whether the actor belongs to that system (by creation unless told: a
 * node's link owns every actor of the peer node).
 */
export function speaksFor(
  frame: Frame,
  from: number,
  calleeOf: (id: number) => Ref | undefined,
  owns: (ref: Ref, from: number) => boolean = sameCreation,
): boolean {
  switch (frame[0]) {
    case FrameKind.Send:
    case FrameKind.SendName:
    case FrameKind.Idle:
    case FrameKind.SpawnFailed:
      return true;
    case FrameKind.Call:
    case FrameKind.Monitor:
    case FrameKind.Demonitor:
      return frame[1] === from;
    case FrameKind.Reply: {
      const callee = calleeOf(frame[1]);
      return callee !== undefined && owns(callee, from);
    }
    case FrameKind.Exit:
    case FrameKind.LinkExit:
      return owns(frame[2], from);
    case FrameKind.Link:
    case FrameKind.Unlink:
      return owns(frame[1], from);
    case FrameKind.Down:
    case FrameKind.NameAdd:
    case FrameKind.NameRemove:
    case FrameKind.Spawned:
      return owns(frame[2], from);
    case FrameKind.HostDown:
    case FrameKind.Spawn:
    case FrameKind.Stop:
      return false;
    default: {
      const unknown: never = frame;
      return unknown;
    }
  }
}

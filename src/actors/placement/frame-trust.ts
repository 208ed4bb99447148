/**
 * Which frames a system may send about whom. A frame from another system speaks only for that
 * system's actors: it may message anyone, but links, exits, monitors, DOWNs, replies and names must
 * name one of its own actors as their source, and lifetime frames (HostDown, Spawn, Stop) come only
 * from a host's parent, which the caller trusts without asking.
 */
import { FrameKind, type Frame } from './frames.js';

/**
 * True when `frame`, from the system of creation `from`, is about that system's own actors.
 * `calleeOf(id)` is the creation of the callee of the pending call `id` (a reply must come from it).
 */
export function speaksFor(frame: Frame, from: number, calleeOf: (id: number) => number | undefined): boolean {
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
    case FrameKind.Reply:
      return calleeOf(frame[1]) === from;
    case FrameKind.Exit:
    case FrameKind.LinkExit:
      return frame[2].creation === from;
    case FrameKind.Link:
    case FrameKind.Unlink:
      return frame[1].creation === from;
    case FrameKind.Down:
    case FrameKind.NameAdd:
    case FrameKind.NameRemove:
    case FrameKind.Spawned:
      return frame[2].creation === from;
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

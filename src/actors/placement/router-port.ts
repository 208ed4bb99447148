import type { ExitReason } from '../exit.js';
import type { Frame } from './frames.js';
import type { RoutedSystem, Router } from './router.js';

/**
 * What a router's tables of links and monitors need of it: its system, how a frame leaves, and
 * whether the system of a creation is up. The router hands them closures, since its hooks are
 * protected (and overridden by each kind of router).
 */
export interface RouterPort {
  readonly system: RoutedSystem;
  /** The router itself: a link relayed to another router is not relayed back to this one. */
  readonly router: Router;
  readonly creation: number;
  reachable(creation: number): boolean;
  /** Encodes and sends; throws as `RouterCore.post`. */
  post(destination: number, frame: Frame): void;
  /** Sends a kernel signal whose reason is replaced when it cannot be encoded. */
  signal(destination: number, reason: ExitReason, build: (reason: ExitReason) => Frame): void;
}

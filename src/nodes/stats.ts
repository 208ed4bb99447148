/** A node's counters: kept for links that closed, added up with the live ones on demand. */
import type { RefusalReason } from './errors.js';
import type { NodeLink } from './link.js';
import type { AutoConnectStats } from './auto-connect.js';

export interface NodeStats {
  readonly linksUp: number;
  readonly handshakesCompleted: number;
  /** Handshakes refused, by either side, by reason. */
  readonly handshakesRefused: Readonly<Partial<Record<RefusalReason, number>>>;
  /** Frames dropped: malformed, misaddressed or speaking for another node's actors. */
  readonly framesDropped: number;
  /** Links closed because the peer sent a frame over the cap. */
  readonly framesTooLarge: number;
  /** Messages from peers for actors (or names) not alive here. */
  readonly unknownActors: number;
  /** Sends dropped or calls refused because a link's queue was full. */
  readonly queueFull: number;
  /** Sends to actors of nodes not connected. */
  readonly unconnectedSends: number;
  readonly linksDown: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
  /** Connecting on first use (`autoConnect`). */
  readonly autoConnect: AutoConnectStats;
}

type LinkCounts = Pick<NodeStats, 'framesDropped' | 'unknownActors' | 'queueFull' | 'bytesSent' | 'bytesReceived'>;

function linkCounts(link: NodeLink): LinkCounts {
  const stats = link.router.stats;
  return {
    framesDropped: stats.framesDropped + stats.framesForged,
    unknownActors: link.router.unknownActors,
    queueFull: link.fullDrops,
    bytesSent: link.frames.bytesWritten,
    bytesReceived: link.frames.bytesRead,
  };
}

export class NodeCounters {
  handshakesCompleted = 0;
  framesTooLarge = 0;
  linksDown = 0;
  readonly handshakesRefused: Partial<Record<RefusalReason, number>> = {};
  /** What links that closed had counted. */
  readonly #closed: { -readonly [K in keyof LinkCounts]: number } = { framesDropped: 0, unknownActors: 0, queueFull: 0, bytesSent: 0, bytesReceived: 0 };

  refused(reason: RefusalReason): void {
    this.handshakesRefused[reason] = (this.handshakesRefused[reason] ?? 0) + 1;
  }

  /** A link went down: its counts are kept. */
  closed(link: NodeLink): void {
    this.linksDown++;
    const counts = linkCounts(link);
    for (const key of Object.keys(counts) as (keyof LinkCounts)[]) this.#closed[key] += counts[key];
  }

  snapshot(links: Iterable<NodeLink>, linksUp: number, unconnectedSends: number, autoConnect: AutoConnectStats): NodeStats {
    const sum = { ...this.#closed };
    for (const link of links) {
      const counts = linkCounts(link);
      for (const key of Object.keys(counts) as (keyof LinkCounts)[]) sum[key] += counts[key];
    }
    return {
      ...sum,
      linksUp,
      handshakesCompleted: this.handshakesCompleted,
      handshakesRefused: { ...this.handshakesRefused },
      framesTooLarge: this.framesTooLarge,
      unconnectedSends,
      linksDown: this.linksDown,
      autoConnect,
    };
  }
}

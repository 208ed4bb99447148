/** Puts the observer's parts together for one admin surface: the event hub, the sampler that feeds it, the action context. */
import { EventHub } from './events.js';
import type { FrameSources } from './frame.js';
import { resolveObserverOptions, type ObserverOptions } from './options.js';
import type { Observer } from './routes.js';
import { Sampler } from './sampler.js';

export interface ObserverHandle extends Observer {
  close(): Promise<void>;
}

export function startObserver(options: ObserverOptions | undefined, maxConnections: number, sources: FrameSources): ObserverHandle {
  const settings = resolveObserverOptions(options, maxConnections);
  // Looks are taken only while someone watches: an unwatched node pays nothing for its page.
  let sampler: Sampler | undefined = undefined;
  const hub = new EventHub(settings.maxEventConnections, settings.maxEventBufferBytes, settings.heartbeatMs, (open) => (open > 0 ? sampler?.start() : sampler?.stop()));
  sampler = new Sampler(
    sources,
    settings.sampleIntervalMs,
    settings.samples,
    (frame) => hub.broadcast(frame),
    (problem) => hub.broadcastEvent('problem', problem),
  );
  const built = sampler;
  return {
    hub,
    sampler: built,
    actions: { runtime: sources.runtime, admin: sources.admin, nodes: sources.nodes, timeoutMs: sources.timeoutMs },
    async close() {
      hub.closeAll();
      await built.close();
    },
  };
}

/**
 * `/events`: Server-Sent Events for the observer page. Each stream gets the sample history once,
 * then a `frame` event per look. Streams are capped in number (`maxEventConnections`, ADMIN_EVENTS_FULL
 * past it) and in what they may hold queued: a page that stops reading has frames skipped (counted)
 * once `maxEventBufferBytes` wait on its socket, so a stalled tab costs at most that plus one frame.
 * A frame is the whole state, so a skipped one is made good by the next.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdminEventsFull } from '../errors.js';
import { errorBody, sendJson } from '../http-response.js';
import type { ObserverFrame, ObserverSample } from './frame.js';

export interface EventStats {
  /** Streams open now. */
  open: number;
  /** Streams refused at the cap. */
  refused: number;
  /** Frames not written to a stream because its buffer was full. */
  skipped: number;
  /** Frames written, over all streams. */
  sent: number;
}

interface Stream {
  readonly response: ServerResponse;
}

export class EventHub {
  readonly stats: EventStats = { open: 0, refused: 0, skipped: 0, sent: 0 };
  readonly #streams = new Set<Stream>();
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    readonly maxConnections: number,
    readonly maxBufferBytes: number,
    readonly heartbeatMs: number,
    /** Called with the number of streams open whenever it changes (the sampler runs while it is above 0). */
    readonly onCount: (open: number) => void,
  ) {}

  /** Opens a stream on `response` (the caller has checked the token), or answers 503 at the cap. */
  open(request: IncomingMessage, response: ServerResponse, history: readonly ObserverSample[], latest: ObserverFrame | undefined): void {
    if (this.#streams.size >= this.maxConnections) {
      this.stats.refused++;
      sendJson(response, 503, errorBody(new AdminEventsFull(this.maxConnections)));
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    // Reconnect after 2 s if the stream drops (EventSource's own retry; the page's reader honours it too).
    response.write('retry: 2000\n\n');
    const stream: Stream = { response };
    this.#streams.add(stream);
    this.#changed();
    const close = (): void => {
      if (!this.#streams.delete(stream)) return;
      this.#changed();
    };
    request.socket.setNoDelay(true);
    response.once('close', close);
    this.#write(stream, 'history', history);
    if (latest !== undefined) this.#write(stream, 'frame', latest);
  }

  /** Sends `frame` to every open stream (skipped for streams whose buffer is full). */
  broadcast(frame: ObserverFrame): void {
    this.broadcastEvent('frame', frame);
  }

  /** Sends one event of any kind (`problem`: a look failed) to every open stream. */
  broadcastEvent(event: string, data: unknown): void {
    if (this.#streams.size === 0) return;
    const text = encode(event, data);
    for (const stream of this.#streams) this.#send(stream, text);
  }

  /** Ends every stream (the surface is closing). */
  closeAll(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const stream of [...this.#streams]) stream.response.end();
    this.#streams.clear();
    this.stats.open = 0;
  }

  #write(stream: Stream, event: string, data: unknown): void {
    this.#send(stream, encode(event, data));
  }

  #send(stream: Stream, text: string): void {
    const { response } = stream;
    if (response.writableEnded || response.destroyed) return;
    if (response.writableLength >= this.maxBufferBytes) {
      this.stats.skipped++;
      return;
    }
    this.stats.sent++;
    response.write(text);
  }

  #changed(): void {
    this.stats.open = this.#streams.size;
    if (this.#streams.size > 0 && this.#heartbeat === undefined) {
      this.#heartbeat = setInterval(() => {
        for (const stream of this.#streams) if (stream.response.writableLength < this.maxBufferBytes) stream.response.write(': ping\n\n');
      }, this.heartbeatMs);
      this.#heartbeat.unref();
    } else if (this.#streams.size === 0) {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
    }
    this.onCount(this.#streams.size);
  }
}

/** One SSE event: JSON on a single `data:` line (JSON.stringify leaves no raw newline in it). */
export function encode(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

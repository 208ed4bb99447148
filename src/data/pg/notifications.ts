/**
 * LISTEN/NOTIFY: the handlers of each channel a connection listens on. The connection actor
 * dispatches each NotificationResponse here; the handle adds and removes handlers and issues the
 * LISTEN/UNLISTEN statements. `channels` and `handlersOf` let a pool re-LISTEN on a new connection.
 */
import { InvalidDataConfig } from '../errors.js';
import type { Logger } from '../../telemetry/index.js';

export interface PgNotification {
  readonly channel: string;
  readonly payload: string;
  /** The notifying backend's process id. */
  readonly processId: number;
}

export type NotificationHandler = (payload: string, notification: PgNotification) => void;

/** Channels listened on per connection (each a LISTEN the server keeps). */
export const MAX_CHANNELS = 1_024;
/** Postgres identifiers hold at most 63 bytes; longer channel names would be truncated silently. */
const MAX_CHANNEL_BYTES = 63;

/** A double-quoted identifier: the channel's exact spelling, case included, never parsed as SQL. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function checkChannel(channel: string): void {
  if (typeof channel !== 'string' || channel.length === 0 || channel.includes('\0') || Buffer.byteLength(channel) > MAX_CHANNEL_BYTES) {
    throw new InvalidDataConfig('channel', `a channel name is 1 to ${MAX_CHANNEL_BYTES} bytes without NUL`);
  }
}

export class Notifications {
  readonly #handlers = new Map<string, Set<NotificationHandler>>();
  /** Handlers that threw: each is logged, none stops the others or the connection. */
  failures = 0;

  /** Where handler failures are logged (the connection actor's log). */
  log: Logger | undefined = undefined;

  get channels(): string[] {
    return [...this.#handlers.keys()];
  }

  get size(): number {
    return this.#handlers.size;
  }

  handlersOf(channel: string): NotificationHandler[] {
    return [...(this.#handlers.get(channel) ?? [])];
  }

  /** Adds a handler; true when it is the channel's first (a LISTEN is needed). */
  add(channel: string, handler: NotificationHandler): boolean {
    let set = this.#handlers.get(channel);
    const first = set === undefined;
    if (set === undefined) this.#handlers.set(channel, (set = new Set()));
    set.add(handler);
    return first;
  }

  /** Removes a handler; true when the channel has none left (an UNLISTEN is due). */
  remove(channel: string, handler: NotificationHandler): boolean {
    const set = this.#handlers.get(channel);
    if (set === undefined || !set.delete(handler)) return false;
    if (set.size > 0) return false;
    this.#handlers.delete(channel);
    return true;
  }

  dispatch(channel: string, payload: string, processId: number): void {
    const set = this.#handlers.get(channel);
    if (set === undefined) return;
    const notification: PgNotification = { channel, payload, processId };
    for (const handler of set) {
      try {
        handler(payload, notification);
      } catch (error) {
        this.failures++;
        this.log?.error({ err: error, event: 'pg.notification_handler_failed', channel }, 'a notification handler threw');
      }
    }
  }
}

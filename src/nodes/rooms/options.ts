/**
 * Rooms options, resolved once: every cap has a default and a ceiling, and a misspelt key is
 * refused naming the nearest known one.
 */
import type { IncomingMessage } from 'node:http';
import { unknownOptionKey } from '../../actors/option-keys.js';
import type { Bus } from '../bus/index.js';
import type { Logger } from '../../telemetry/index.js';
import { InvalidRoomOption } from './errors.js';
import type { PresenceStore } from './presence.js';

/** What the authentication hook answers for an accepted socket: who it is (any JSON value), or undefined to refuse. */
export type Authenticate = (request: IncomingMessage) => unknown | Promise<unknown>;
export type Authorize = (user: unknown, room: string, action: 'join' | 'publish') => boolean | Promise<boolean>;
/** `drop-oldest`: the oldest queued frame goes (counted, reported to the client as a gap); `close`: the socket closes with 4008. */
export type SendQueuePolicy = 'drop-oldest' | 'close';

export interface RoomsOptions {
  readonly bus: Bus;
  /** Port to listen on (default 0: any free port); or attach to `server`. */
  readonly port?: number;
  readonly host?: string;
  /** This instance's id, unique in the deployment (default a random one); socket ids start with it. */
  readonly instance?: string;
  /** Topic prefix on the bus (default `room.`). */
  readonly topicPrefix?: string;
  readonly authenticate?: Authenticate;
  readonly authorize?: Authorize;
  readonly presence?: PresenceStore;
  /** Open sockets (WebSocket and SSE) on this instance (default 10,000; ceiling 1,000,000). */
  readonly maxSockets?: number;
  /** Rooms one socket is in at most (default 100; ceiling 10,000). */
  readonly maxRoomsPerSocket?: number;
  /** Topics this instance tails at most: its room bridges and the direct-message topic (default and ceiling 1,024, the streams cap; at least 2). */
  readonly maxTopics?: number;
  /** Largest client frame (default 64 KiB; ceiling 1 MiB); a larger one closes the socket with 1009 `rooms.maxMessageBytes`. */
  readonly maxMessageBytes?: number;
  /** Joins per second one socket may make, with a burst of as many (default 20; ceiling 1,000). */
  readonly joinRatePerSecond?: number;
  /** Frames per second one socket may send, burst as many (default 100; ceiling 10,000); past it the socket closes with 4029. */
  readonly messageRatePerSecond?: number;
  /** Frames queued for one slow socket (default 1,000; ceiling 100,000). */
  readonly sendQueueMax?: number;
  readonly sendQueuePolicy?: SendQueuePolicy;
  /** Serves other HTTP paths on the socket port (a page, an API); answers whether it handled the request (404 otherwise). */
  readonly httpHandler?: (req: IncomingMessage, res: import('node:http').ServerResponse) => boolean | Promise<boolean>;
  /** Prometheus registry for the rooms metrics (docs/rooms.md); none: no metrics. */
  readonly metrics?: import('prom-client').Registry;
  readonly logger?: Logger;
}

export const ROOMS_CAPS = Object.freeze({ maxSockets: 1_000_000, maxTopics: 1_024, maxRoomsPerSocket: 10_000, maxMessageBytes: 1_048_576, joinRatePerSecond: 1_000, messageRatePerSecond: 10_000, sendQueueMax: 100_000 });
export const ROOMS_DEFAULTS = Object.freeze({ maxSockets: 10_000, maxTopics: 1_024, maxRoomsPerSocket: 100, maxMessageBytes: 65_536, joinRatePerSecond: 20, messageRatePerSecond: 100, sendQueueMax: 1_000 });

export interface ResolvedRooms {
  readonly bus: Bus;
  readonly port: number;
  readonly host: string | undefined;
  readonly instance: string;
  readonly topicPrefix: string;
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  readonly presence: PresenceStore | undefined;
  readonly maxSockets: number;
  readonly maxRoomsPerSocket: number;
  readonly maxTopics: number;
  readonly maxMessageBytes: number;
  readonly joinRatePerSecond: number;
  readonly messageRatePerSecond: number;
  readonly sendQueueMax: number;
  readonly sendQueuePolicy: SendQueuePolicy;
  readonly httpHandler: RoomsOptions['httpHandler'];
  readonly logger: Logger | undefined;
}

const KNOWN: readonly (keyof RoomsOptions)[] = [
  'bus', 'port', 'host', 'instance', 'topicPrefix', 'authenticate', 'authorize', 'presence', 'maxSockets', 'maxRoomsPerSocket',
  'maxTopics', 'maxMessageBytes', 'joinRatePerSecond', 'messageRatePerSecond', 'sendQueueMax', 'sendQueuePolicy', 'httpHandler', 'metrics', 'logger',
];

function integer(option: keyof typeof ROOMS_CAPS, value: number | undefined, min = 1): number {
  const resolved = value ?? ROOMS_DEFAULTS[option];
  if (!Number.isInteger(resolved) || resolved < min || resolved > ROOMS_CAPS[option]) {
    throw new InvalidRoomOption(`rooms.${option}`, `must be an integer in ${min}..${ROOMS_CAPS[option]}`);
  }
  return resolved;
}

export function resolveRooms(options: RoomsOptions): ResolvedRooms {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new InvalidRoomOption(`rooms.${unknown.key}`, unknown.detail);
  if (typeof options.bus?.publish !== 'function') throw new InvalidRoomOption('rooms.bus', 'required: a Bus (postgresBus, …)');
  const policy = options.sendQueuePolicy ?? 'drop-oldest';
  if (policy !== 'drop-oldest' && policy !== 'close') throw new InvalidRoomOption('rooms.sendQueuePolicy', "must be 'drop-oldest' or 'close'");
  const instance = options.instance ?? Math.random().toString(36).slice(2, 10);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(instance)) throw new InvalidRoomOption('rooms.instance', 'must be 1-64 letters, digits, _ or -');
  const prefix = options.topicPrefix ?? 'room.';
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/.test(prefix)) throw new InvalidRoomOption('rooms.topicPrefix', 'must be 1-32 letters, digits, _ . or -');
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidRoomOption('rooms.port', 'must be an integer in 0..65535');
  return {
    bus: options.bus,
    port,
    host: options.host,
    instance,
    topicPrefix: prefix,
    authenticate: options.authenticate ?? (() => ({})),
    authorize: options.authorize ?? (() => true),
    presence: options.presence,
    maxSockets: integer('maxSockets', options.maxSockets),
    maxRoomsPerSocket: integer('maxRoomsPerSocket', options.maxRoomsPerSocket),
    // The direct-message topic takes one: at least one room must fit.
    maxTopics: integer('maxTopics', options.maxTopics, 2),
    maxMessageBytes: integer('maxMessageBytes', options.maxMessageBytes),
    joinRatePerSecond: integer('joinRatePerSecond', options.joinRatePerSecond),
    messageRatePerSecond: integer('messageRatePerSecond', options.messageRatePerSecond),
    sendQueueMax: integer('sendQueueMax', options.sendQueueMax),
    sendQueuePolicy: policy,
    httpHandler: options.httpHandler,
    logger: options.logger,
  };
}

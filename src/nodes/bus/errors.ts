/**
 * Error registry of the bus shared by rooms and the change feed. Stable codes, never reused; each
 * has a row in docs/errors.md.
 */
import { codedError } from '../../actors/coded-error.js';

export const NodeBusErrorCode = {
  InvalidArgument: 'NODE_BUS_INVALID_ARGUMENT',
  Closed: 'NODE_BUS_CLOSED',
  Unavailable: 'NODE_BUS_UNAVAILABLE',
  HomeFailed: 'NODE_BUS_HOME_FAILED',
} as const;
export type NodeBusErrorCode = (typeof NodeBusErrorCode)[keyof typeof NodeBusErrorCode];

/** A topic, sequence or option given to the bus is not valid (or past its cap); `argument` names it. */
export class NodeBusInvalidArgument extends codedError(NodeBusErrorCode.InvalidArgument, (argument: string, detail: string) => ({
  message: `invalid bus ${argument}: ${detail}`,
  fields: { argument },
})) {}

/** A call on a bus after `close()`. */
export class NodeBusClosed extends codedError(NodeBusErrorCode.Closed, () => ({ message: 'the bus is closed', fields: {} })) {}

/** The node bus: the topic's home node is not connected (or did not answer in time); the topic waits for it. */
export class NodeBusUnavailable extends codedError(NodeBusErrorCode.Unavailable, (topic: string, home: string, detail: string) => ({
  message: `topic ${topic} is unavailable: its home node ${home} ${detail}`,
  fields: { topic, home },
})) {}

/** The node bus: the topic's home node refused or failed the request; `remoteCode` is its error's code (`NODE_BUS_NOT_HOME`: members differ). */
export class NodeBusHomeFailed extends codedError(NodeBusErrorCode.HomeFailed, (topic: string, home: string, remoteCode: string) => ({
  message: `the home node ${home} of topic ${topic} failed the request (${remoteCode})`,
  fields: { topic, home, remoteCode },
})) {}

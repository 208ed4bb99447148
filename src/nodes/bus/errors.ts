/**
 * Error registry of the bus shared by rooms and the change feed. Stable codes, never reused; each
 * has a row in docs/errors.md.
 */
import { codedError } from '../../actors/coded-error.js';

export const NodeBusErrorCode = {
  InvalidArgument: 'NODE_BUS_INVALID_ARGUMENT',
  Closed: 'NODE_BUS_CLOSED',
} as const;
export type NodeBusErrorCode = (typeof NodeBusErrorCode)[keyof typeof NodeBusErrorCode];

/** A topic, sequence or option given to the bus is not valid (or past its cap); `argument` names it. */
export class NodeBusInvalidArgument extends codedError(NodeBusErrorCode.InvalidArgument, (argument: string, detail: string) => ({
  message: `invalid bus ${argument}: ${detail}`,
  fields: { argument },
})) {}

/** A call on a bus after `close()`. */
export class NodeBusClosed extends codedError(NodeBusErrorCode.Closed, () => ({ message: 'the bus is closed', fields: {} })) {}

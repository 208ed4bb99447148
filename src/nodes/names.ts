/**
 * Node names, `name@host:port`: the name part tells nodes on one host apart, host and port say
 * where the node listens. A name is the node's identity in the cluster: refs carry it.
 */
import { isIP } from 'node:net';
import { InvalidNodeName } from './errors.js';

export interface NodeAddress {
  readonly node: string;
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const HOST = /^[A-Za-z0-9.-]{1,253}$/;
export const MAX_NODE_NAME_LENGTH = 64 + 1 + 255 + 1 + 5;

/** Parses and checks a node name; throws InvalidNodeName. Port 0 only where a free port will be taken. */
export function parseNodeName(value: unknown, anyPort = false): NodeAddress {
  if (typeof value !== 'string') throw new InvalidNodeName(value, 'must be a string');
  if (value.length > MAX_NODE_NAME_LENGTH) throw new InvalidNodeName(value, `longer than ${MAX_NODE_NAME_LENGTH} characters`);
  const at = value.indexOf('@');
  const colon = value.lastIndexOf(':');
  if (at <= 0 || colon < at) throw new InvalidNodeName(value, 'must be name@host:port');
  const name = value.slice(0, at);
  let host = value.slice(at + 1, colon);
  const portText = value.slice(colon + 1);
  if (!NAME.test(name)) throw new InvalidNodeName(value, 'the name part takes 1..64 of A-Z a-z 0-9 _ . -');
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
    if (isIP(host) !== 6) throw new InvalidNodeName(value, 'a bracketed host must be an IPv6 address');
  } else if (!HOST.test(host)) {
    throw new InvalidNodeName(value, 'the host must be a host name or an IP address');
  }
  if (!/^[0-9]{1,5}$/.test(portText)) throw new InvalidNodeName(value, 'the port must be a number');
  const port = Number(portText);
  if ((port < 1 && !(anyPort && port === 0)) || port > 65_535) throw new InvalidNodeName(value, 'the port must be in 1..65535');
  return { node: value, name, host, port };
}

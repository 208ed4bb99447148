import { createBroker, type Broker, type BrokerOptions, type TopicMessage } from '../../../src/bus/index.js';
import { afterEachTest } from '../../support/file-hooks.js';

/** Brokers made by the current test; each is closed after it, so no retry timer outlives a test. */
const liveBrokers = new Set<Broker>();

afterEachTest(() => {
  for (const broker of liveBrokers) broker.close();
  liveBrokers.clear();
});

/** A broker closed after the test. */
export function testBroker(options: BrokerOptions = {}): Broker {
  const broker = createBroker(options);
  liveBrokers.add(broker);
  return broker;
}

/** Lets the dispatcher run: one event-loop turn (its microtask pass and any setImmediate continuation). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `n` as a 4-byte big-endian payload, so tests can tell messages apart and check their order. */
export function numbered(n: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, n);
  return bytes;
}

export function numberOf(message: TopicMessage): number {
  return new DataView(message.payload.buffer, message.payload.byteOffset, 4).getUint32(0);
}

/** True when `values` strictly increase. */
export function increasing(values: readonly number[]): boolean {
  for (let i = 1; i < values.length; i++) if (values[i]! <= values[i - 1]!) return false;
  return true;
}

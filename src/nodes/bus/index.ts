// The bus shared by rooms and the change feed: ordered topics with catch-up and typed gaps.
export { gapOf, type Bus, type BusGap, type BusItem, type BusMessage, type BusRead, type BusSubscription } from './bus.js';
export { postgresBus, PostgresBus, BUS_DEFAULTS, type PostgresBusOptions } from './postgres-bus.js';
export { NodeBusErrorCode, NodeBusInvalidArgument, NodeBusClosed, NodeBusUnavailable, NodeBusHomeFailed } from './errors.js';
export { natsBus, NatsBus, type NatsBusOptions } from './nats-bus.js';
export { nodeBus, NodeBus, homeOf, NODE_BUS_NAME, type NodeBusOptions } from './node-bus.js';

// Rooms: WebSocket and SSE clients in rooms across instances, over the bus, with catch-up and presence.
export { startRooms, roomsChild, type Rooms, type RoomsStartOptions } from './rooms.js';
export { roomsProviders, ROOM_SOCKET_SERVER_BEHAVIOUR } from './admin-provider.js';
export { ROOMS_CAPS, ROOMS_DEFAULTS, type RoomsOptions, type Authenticate, type Authorize, type SendQueuePolicy } from './options.js';
export { sessionStore, sessionAuthenticate, type SessionStore, type SessionStoreOptions } from './sessions.js';
export { postgresPresence, type PresenceEntry, type PresenceStore, type PostgresPresenceOptions } from './presence.js';
export { ROOMS_DETAIL_LIMITS, type RoomsStatus, type RoomsDetail } from './socket-server.js';
export type { RoomPayload } from './hub.js';
export { RoomErrorCode, InvalidRoomOption, RoomCapReached, RoomForbidden, RoomBadSeq, RoomBadFrame } from './errors.js';
export { RoomsMetrics, roomsMetrics } from './metrics.js';
export { createMoloAdapter, type MoloAdapterOptions } from './socketio-adapter.js';

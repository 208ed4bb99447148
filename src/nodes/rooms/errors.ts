/**
 * Error registry of rooms. Stable codes, never reused; each has a row in docs/errors.md. The same
 * codes travel to clients in `{ t: 'error', code }` frames, so a browser can tell them apart.
 */
import { codedError, optionError } from '../../actors/coded-error.js';

export const RoomErrorCode = {
  InvalidOption: 'ROOM_INVALID_OPTION',
  CapReached: 'ROOM_CAP_REACHED',
  Forbidden: 'ROOM_FORBIDDEN',
  BadSeq: 'ROOM_BAD_SEQ',
  BadFrame: 'ROOM_BAD_FRAME',
} as const;
export type RoomErrorCode = (typeof RoomErrorCode)[keyof typeof RoomErrorCode];

/** An option of `startRooms` is unknown, missing or out of its range; `option` names it (and so its cap). */
export class InvalidRoomOption extends optionError(RoomErrorCode.InvalidOption, 'rooms option') {}

/** A socket or instance is at one of its caps; `cap` names the option (`rooms.maxRoomsPerSocket`, …). */
export class RoomCapReached extends codedError(RoomErrorCode.CapReached, (cap: string, limit: number) => ({
  message: `rooms cap reached: ${cap} = ${limit}`,
  fields: { cap, limit },
})) {}

/** The authorization hook refused the socket's join (or publish) in that room. */
export class RoomForbidden extends codedError(RoomErrorCode.Forbidden, (room: string, action: string) => ({
  message: `${action} in room ${JSON.stringify(room.slice(0, 128))} refused by the authorization hook`,
  fields: { room, action },
})) {}

/** A reconnect claimed a sequence the room never reached (forged or from another deployment). */
export class RoomBadSeq extends codedError(RoomErrorCode.BadSeq, (room: string, since: number, lastSeq: number) => ({
  message: `room ${JSON.stringify(room.slice(0, 128))} is at seq ${lastSeq}; since = ${since} is not a sequence it reached`,
  fields: { room, since, lastSeq },
})) {}

/** A client frame is not JSON of a known shape. */
export class RoomBadFrame extends codedError(RoomErrorCode.BadFrame, (detail: string) => ({
  message: `bad rooms frame: ${detail}`,
  fields: {},
})) {}

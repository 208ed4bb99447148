/**
 * Frames between a system and its hosts. Each is a tuple whose first element is its kind, so a
 * switch over `frame[0]` narrows it and must end in `never`. Incoming frames are untrusted: each is
 * checked against its shape before anything reads it.
 */
import type { ExitReason } from '../exit.js';
import type { MonitorRef } from '../ref.js';
import { Ref } from '../ref.js';

export const FrameKind = {
  Send: 1,
  SendName: 2,
  Call: 3,
  Reply: 4,
  Exit: 5,
  Link: 6,
  Unlink: 7,
  LinkExit: 8,
  Monitor: 9,
  Demonitor: 10,
  Down: 11,
  NameAdd: 12,
  NameRemove: 13,
  Spawn: 14,
  Spawned: 15,
  SpawnFailed: 16,
  HostDown: 17,
  Idle: 18,
  Stop: 19,
} as const;
type K = typeof FrameKind;

/** Why a remote call failed, as the callee's system saw it; the caller rebuilds the typed error. */
export type CallFailure =
  | readonly ['exited', ExitReason]
  | readonly ['noproc']
  | readonly ['timeout']
  | readonly ['mailbox_full', number]
  | readonly ['payload_too_large', number, number]
  | readonly ['error', Error];

/** A behaviour module as it travels: URL, export name, factory arguments. */
export type ModuleSpec = readonly [moduleUrl: string, exportName: string, args: readonly unknown[]];

export interface WireSpawnOptions {
  readonly name?: string | undefined;
  readonly trapExit?: boolean | undefined;
  readonly mailbox?: { readonly capacity?: number | undefined; readonly overflow?: string | undefined } | undefined;
  readonly link?: Ref | undefined;
}

export type SpawnStage = 'load' | 'spawn' | 'init';

export type Frame =
  | readonly [K['Send'], to: Ref, message: unknown]
  | readonly [K['SendName'], name: string, message: unknown]
  | readonly [K['Call'], origin: number, id: number, to: Ref, request: unknown, timeoutMs: number]
  | readonly [K['Reply'], id: number, ok: boolean, value: unknown]
  | readonly [K['Exit'], to: Ref, from: Ref, reason: ExitReason]
  | readonly [K['Link'], from: Ref, to: Ref]
  | readonly [K['Unlink'], from: Ref, to: Ref]
  | readonly [K['LinkExit'], to: Ref, from: Ref, reason: ExitReason]
  | readonly [K['Monitor'], origin: number, id: MonitorRef, target: Ref]
  | readonly [K['Demonitor'], origin: number, id: MonitorRef, target: Ref]
  | readonly [K['Down'], id: MonitorRef, ref: Ref, reason: ExitReason]
  | readonly [K['NameAdd'], name: string, ref: Ref]
  | readonly [K['NameRemove'], name: string, ref: Ref]
  | readonly [K['Spawn'], id: number, module: ModuleSpec, options: WireSpawnOptions]
  | readonly [K['Spawned'], id: number, ref: Ref]
  | readonly [K['SpawnFailed'], id: number, reason: ExitReason, stage: SpawnStage]
  | readonly [K['HostDown'], creation: number, reason: ExitReason]
  | readonly [K['Idle']]
  | readonly [K['Stop']];

/** Frames about names, spawning and host lifetime, which the main system and a host handle differently. */
export type ControlFrame = Extract<
  Frame,
  readonly [
    | typeof FrameKind.SendName
    | typeof FrameKind.NameAdd
    | typeof FrameKind.NameRemove
    | typeof FrameKind.Spawn
    | typeof FrameKind.Spawned
    | typeof FrameKind.SpawnFailed
    | typeof FrameKind.Idle
    | typeof FrameKind.Stop,
    ...unknown[],
  ]
>;

type Check = (value: unknown) => boolean;

const any: Check = () => true;
const isRef: Check = (value) => value instanceof Ref;
const isId: Check = (value) => Number.isInteger(value) && (value as number) >= 0;
const isName: Check = (value) => typeof value === 'string' && value.length > 0;
const isBoolean: Check = (value) => typeof value === 'boolean';
const REASON_WORDS = new Set(['normal', 'shutdown', 'kill', 'killed', 'noproc', 'noconnection']);
const isReason: Check = (value) =>
  (typeof value === 'string' && REASON_WORDS.has(value)) ||
  value instanceof Error ||
  (typeof value === 'object' && value !== null && 'shutdown' in value);
const isTimeout: Check = (value) => typeof value === 'number' && value >= 0;
const isModule: Check = (value) =>
  Array.isArray(value) && value.length === 3 && isName(value[0]) && isName(value[1]) && Array.isArray(value[2]);
const isSpawnOptions: Check = (value) => {
  if (typeof value !== 'object' || value === null) return false;
  const options = value as Record<string, unknown>;
  return (
    (options.name === undefined || isName(options.name)) &&
    (options.trapExit === undefined || isBoolean(options.trapExit)) &&
    (options.mailbox === undefined || (typeof options.mailbox === 'object' && options.mailbox !== null)) &&
    (options.link === undefined || isRef(options.link))
  );
};
const isStage: Check = (value) => value === 'load' || value === 'spawn' || value === 'init';

const SHAPES: Readonly<Record<number, readonly Check[]>> = {
  [FrameKind.Send]: [isRef, any],
  [FrameKind.SendName]: [isName, any],
  [FrameKind.Call]: [isId, isId, isRef, any, isTimeout],
  [FrameKind.Reply]: [isId, isBoolean, any],
  [FrameKind.Exit]: [isRef, isRef, isReason],
  [FrameKind.Link]: [isRef, isRef],
  [FrameKind.Unlink]: [isRef, isRef],
  [FrameKind.LinkExit]: [isRef, isRef, isReason],
  [FrameKind.Monitor]: [isId, isId, isRef],
  [FrameKind.Demonitor]: [isId, isId, isRef],
  [FrameKind.Down]: [isId, isRef, isReason],
  [FrameKind.NameAdd]: [isName, isRef],
  [FrameKind.NameRemove]: [isName, isRef],
  [FrameKind.Spawn]: [isId, isModule, isSpawnOptions],
  [FrameKind.Spawned]: [isId, isRef],
  [FrameKind.SpawnFailed]: [isId, isReason, isStage],
  [FrameKind.HostDown]: [isId, isReason],
  [FrameKind.Idle]: [],
  [FrameKind.Stop]: [],
};

/** The frame, if `value` has the shape of one; undefined otherwise. */
export function checkFrame(value: unknown): Frame | undefined {
  if (!Array.isArray(value)) return undefined;
  const shape = SHAPES[value[0] as number];
  if (shape === undefined || value.length !== shape.length + 1) return undefined;
  for (let index = 0; index < shape.length; index++) if (!shape[index]!(value[index + 1])) return undefined;
  return value as unknown as Frame;
}

/** Reads a call failure from a reply; undefined when it is malformed. */
export function checkCallFailure(value: unknown): CallFailure | undefined {
  if (!Array.isArray(value)) return undefined;
  switch (value[0]) {
    case 'exited':
      return value.length === 2 && isReason(value[1]) ? (value as unknown as CallFailure) : undefined;
    case 'noproc':
    case 'timeout':
      return value.length === 1 ? (value as unknown as CallFailure) : undefined;
    case 'mailbox_full':
      return value.length === 2 && typeof value[1] === 'number' ? (value as unknown as CallFailure) : undefined;
    case 'payload_too_large':
      return value.length === 3 && typeof value[1] === 'number' && typeof value[2] === 'number'
        ? (value as unknown as CallFailure)
        : undefined;
    case 'error':
      return value.length === 2 && value[1] instanceof Error ? (value as unknown as CallFailure) : undefined;
    default:
      return undefined;
  }
}

import { describe, expect, it } from 'vitest';
import {
  CallRequest,
  DownMessage,
  ExitMessage,
  MoloError,
  NotSerializable,
  PayloadTooLarge,
  Ref,
  registerWireClass,
} from '../../../src/actors/index.js';
import { checkFrame, FrameKind, type Frame } from '../../../src/actors/placement/frames.js';
import { internRef } from '../../../src/actors/placement/ref-table.js';
import { decodeFrame, encodeFrame, frameDestination } from '../../../src/actors/placement/wire.js';
import { ask, checkPlacementLeaks, placementSystem, spawnProbe } from './support.js';

checkPlacementLeaks();

const roundTrip = (frame: Frame, limit = 1_048_576): Frame | undefined => decodeFrame(encodeFrame(42, frame, limit));

describe('the placement wire format', () => {
  it('carries the destination creation in a 4-byte header', () => {
    const bytes = encodeFrame(0x7fff_fffe, [FrameKind.Idle], 100);
    expect(frameDestination(bytes)).toBe(0x7fff_fffe);
    expect(decodeFrame(bytes)).toEqual([FrameKind.Idle]);
  });

  it('decodes refs to one canonical object per actor, and a live local ref to itself', () => {
    const a = roundTrip([FrameKind.Send, internRef('n', 7, 99), 'x']) as Frame & [number, Ref];
    const b = roundTrip([FrameKind.Send, new Ref('n', 7, 99), 'y']) as Frame & [number, Ref];
    expect(a[1]).toBe(b[1]);
    const live = new Ref('n', 8, 99);
    live._cell = {};
    expect((roundTrip([FrameKind.Send, live, 'z']) as Frame & [number, Ref])[1]).toBe(live);
    expect(new Set([a[1], b[1]]).size).toBe(1);
  });

  it('keeps errors (name, message, stack, code, error cause) and exit reasons', () => {
    const cause = new TypeError('inner');
    const error = Object.assign(new RangeError('outer', { cause }), { code: 'E_OUTER', secret: 'dropped' });
    const [, , , reason] = roundTrip([FrameKind.Exit, internRef('n', 1, 2), internRef('n', 2, 2), error]) as [number, Ref, Ref, Error];
    expect(reason).toBeInstanceOf(Error);
    expect(reason.name).toBe('RangeError');
    expect(reason.message).toBe('outer');
    expect(reason.stack).toBe(error.stack);
    expect((reason as Error & { code: string }).code).toBe('E_OUTER');
    expect((reason.cause as Error).message).toBe('inner');
    expect(reason).not.toHaveProperty('secret');
    const shutdown = roundTrip([FrameKind.HostDown, 5, { shutdown: { thread_exit: 3 } }]);
    expect(shutdown).toEqual([FrameKind.HostDown, 5, { shutdown: { thread_exit: 3 } }]);
  });

  it('keeps the kernel messages and registered classes as themselves', () => {
    class Envelope {
      constructor(readonly inner: unknown) {}
    }
    registerWireClass({ Class: Envelope, type: 0x5f, write: (e) => [e.inner], read: (data) => new Envelope((data as unknown[])[0]) });
    expect(() => registerWireClass({ Class: class Other {}, type: 0x5f, write: () => 0, read: () => ({}) })).toThrow(/taken/);
    expect(() => registerWireClass({ Class: Envelope, type: 0x20, write: () => 0, read: () => new Envelope(0) })).toThrow(RangeError);
    const from = internRef('n', 3, 4);
    const [, , message] = roundTrip([FrameKind.Send, from, [new ExitMessage(from, 'normal'), new DownMessage(9, from, 'noproc'), new Envelope(new Map([[1, 2]]))]]) as [
      number,
      Ref,
      [ExitMessage, DownMessage, Envelope],
    ];
    expect(message[0]).toBeInstanceOf(ExitMessage);
    expect(message[0].from).toBe(from);
    expect(message[1]).toBeInstanceOf(DownMessage);
    expect(message[1]).toMatchObject({ monitor: 9, ref: from, reason: 'noproc' });
    expect(message[2]).toBeInstanceOf(Envelope);
    expect(message[2].inner).toEqual(new Map([[1, 2]]));
  });

  it('refuses what cannot cross, typed, and the codec keeps working', () => {
    const to = internRef('n', 1, 1);
    expect(() => encodeFrame(1, [FrameKind.Send, to, Symbol('s')], 1_000)).toThrow(NotSerializable);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cycleError = (() => {
      try {
        encodeFrame(1, [FrameKind.Send, to, cyclic], 1_000);
      } catch (error) {
        return error as MoloError;
      }
    })();
    expect(cycleError).toBeInstanceOf(NotSerializable);
    expect(cycleError!.code).toBe('PLACEMENT_NOT_SERIALIZABLE');
    expect(() => encodeFrame(1, [FrameKind.Send, to, new CallRequest('q', to)], 1_000)).toThrow(/CallRequest/);
    const tooLarge = (() => {
      try {
        encodeFrame(1, [FrameKind.Send, to, 'x'.repeat(200)], 100);
      } catch (error) {
        return error as PayloadTooLarge;
      }
    })();
    expect(tooLarge).toBeInstanceOf(PayloadTooLarge);
    expect(tooLarge).toMatchObject({ limitBytes: 100, code: 'PLACEMENT_PAYLOAD_TOO_LARGE' });
    expect(tooLarge!.sizeBytes).toBeGreaterThan(200);
    expect(roundTrip([FrameKind.Send, to, 'fine'])).toEqual([FrameKind.Send, to, 'fine']);
  });

  it('carries any ref id up to 2^53 and any node name; refuses a ref it cannot carry; drops malformed ref bytes', () => {
    for (const [node, id, creation] of [['n', 0, 1], ['ünï@h:1', 0xffff_ffff, 0xffff_ffff], ['x', 2 ** 32, 7], ['x', Number.MAX_SAFE_INTEGER, 0]] as const) {
      const ref = (roundTrip([FrameKind.Send, new Ref(node, id, creation), 'm']) as unknown as [number, Ref])[1];
      expect([ref.node, ref.id, ref.creation]).toEqual([node, id, creation]);
    }
    expect(() => encodeFrame(1, [FrameKind.Send, new Ref('n', -1, 1), 'm'], 1_000)).toThrow(NotSerializable);
    // [Send, ext 0x40 with a layout byte of 9, 'm']: no such layout.
    const body = [0x93, 0x01, 0xd6, 0x40, 9, 0, 0, 0, 0xa1, 0x6d];
    expect(decodeFrame(new Uint8Array([0, 0, 0, 1, ...body]))).toBeUndefined();
  });

  it('rejects malformed frames instead of throwing', () => {
    const headed = (body: number[]): Uint8Array => new Uint8Array([0, 0, 0, 1, ...body]);
    expect(decodeFrame(new Uint8Array([0, 0]))).toBeUndefined();
    expect(decodeFrame(headed([0xc1]))).toBeUndefined();
    expect(decodeFrame(headed([0x93, 0x01, 0x01, 0x01]))).toBeUndefined();
    expect(checkFrame('nope')).toBeUndefined();
    expect(checkFrame([FrameKind.Send, 'not a ref', 1])).toBeUndefined();
    expect(checkFrame([FrameKind.Send, internRef('n', 1, 1)])).toBeUndefined();
    expect(checkFrame([FrameKind.Exit, internRef('n', 1, 1), internRef('n', 2, 1), 'not a reason'])).toBeUndefined();
    expect(checkFrame([FrameKind.Spawn, 1, ['file:///x.js', 'x', []], { link: 'not a ref' }])).toBeUndefined();
    expect(checkFrame([123])).toBeUndefined();
  });

  it('an exit reason that cannot be encoded still arrives, as plain data saying so', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, 'thread');
    const exited = system.exited(ref);
    expect(await ask(system, ref, 'stopUnencodable')).toBe('stopping');
    const reason = (await exited) as { shutdown: string };
    expect(reason.shutdown).toContain('{shutdown, ');
    expect(reason.shutdown).toContain('cannot send across a placement boundary');
  });
});

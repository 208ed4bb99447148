import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  formatReason,
  shutdownWith,
  type ActorSystemOptions,
  type ExitReason,
  type KernelObserver,
  type ObservedActor,
} from '../../src/actors/index.js';
import { ActorCrashed } from '../../src/actors/index.js';
import { classifyExit, createTelemetry, Telemetry, type TelemetryActor } from '../../src/telemetry/index.js';
import { describeReason } from '../../src/telemetry/actor-shape.js';

// src/telemetry cannot import the kernel, so these keep its structural copies in step.
describe('telemetry fits the kernel structurally', () => {
  it('is a KernelObserver and its options are system options', () => {
    expectTypeOf<Telemetry>().toExtend<KernelObserver>();
    expectTypeOf<ObservedActor>().toExtend<TelemetryActor>();
    expectTypeOf(createTelemetry({ logger: false }).systemOptions).toExtend<ActorSystemOptions>();
  });

  it('describes every exit reason as the kernel formats it', () => {
    const reasons: ExitReason[] = [
      'normal',
      'shutdown',
      'killed',
      'noproc',
      'noconnection',
      shutdownWith({ drained: 3 }),
      new Error('boom'),
      new ActorCrashed('thrown string'),
    ];
    for (const reason of reasons) expect(describeReason(reason)).toBe(formatReason(reason));
  });

  it('classifies exit reasons for the exits metric', () => {
    expect(['normal', 'shutdown', 'kill', 'killed', 'noproc', 'noconnection'].map(classifyExit)).toEqual([
      'normal',
      'shutdown',
      'killed',
      'killed',
      'noproc',
      'noconnection',
    ]);
    expect(classifyExit(shutdownWith('drained'))).toBe('shutdown');
    expect(classifyExit(new Error('boom'))).toBe('error');
    expect(classifyExit({ unexpected: true })).toBe('error');
  });
});

/**
 * Options of the cluster services are checked once at the boundary: an unknown key is an error
 * naming it and the nearest known key (a typo must not silently fall back to a default), and each
 * number has its range.
 */
import { describe, expect, it } from 'vitest';
import { createBroker } from '../../src/bus/index.js';
import { startClusterTopics, startGlobal, startGroups } from '../../src/nodes/index.js';
import { testNode } from './support.js';

describe('cluster service options', () => {
  it('unknown keys name the nearest known one; numbers have their ranges', async () => {
    const node = await testNode('opt');
    expect(() => startGlobal(node, { maxClockDrift: 5_000 } as object)).toThrow(/option maxClockDrift: unknown option; did you mean maxClockDriftMs\?/);
    expect(() => startGlobal(node, { lockTimeout: 500 } as object)).toThrow(/did you mean lockTimeoutMs\?/);
    expect(() => startGlobal(node, { maxClockDriftMs: 10 })).toThrow(/option maxClockDriftMs: must be an integer in 1000..86400000/);
    expect(() => startGroups(node, { maxMember: 5 } as object)).toThrow(/did you mean maxMembers\?/);
    expect(() => startGroups(node, { colour: 'blue' } as object)).toThrow(/option colour: unknown option$/);
    const broker = createBroker({ system: node.system });
    expect(() => startClusterTopics(node, broker, { registy: undefined } as object)).toThrow(/did you mean registry\?/);
    broker.close();
    // Nothing was started by the refused calls: the services start afterwards under their names.
    startGlobal(node, { maxClockDriftMs: 1_000 }).stop();
    startGroups(node, { maxMembers: 5 }).stop();
  });
});

/**
 * The priority range docs/tasks.md states: an integer from -1,000 to 1,000, default 0, higher first,
 * equal priorities in enqueue order; anything else is InvalidBusOption naming `priority`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidBusOption, openSqliteTaskQueue, type SqlTaskQueue } from '../../../src/bus/index.js';
import { testSystem } from '../../support/systems.js';

let dir: string | undefined;
let queue: SqlTaskQueue | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('task priority', () => {
  it('takes integers -1000..1000 (default 0), leases highest first then oldest, and refuses the rest naming `priority`', async () => {
    const system = testSystem();
    dir = mkdtempSync(join(tmpdir(), 'molo-priority-'));
    queue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db'), readers: 0 });
    await queue.createQueue('q');
    await queue.enqueue('q', { name: 'low' }, { priority: -1_000 });
    await queue.enqueue('q', { name: 'default-1' });
    await queue.enqueue('q', { name: 'high' }, { priority: 1_000 });
    await queue.enqueue('q', { name: 'default-2' }, { priority: 0 });
    for (const priority of [1_001, -1_001, 0.5, Number.NaN]) {
      await expect(queue.enqueue('q', { name: 'bad' }, { priority })).rejects.toMatchObject({ code: InvalidBusOption.code, option: 'priority' });
    }
    const leased = await queue.lease('q', 10);
    expect(leased.map((task) => task.envelope.name)).toEqual(['high', 'default-1', 'default-2', 'low']);
    expect(leased.map((task) => task.priority)).toEqual([1_000, 0, 0, -1_000]);
    await queue.settle('q', leased.map((task) => ({ id: task.envelope.id, leaseToken: task.leaseToken, outcome: { kind: 'released' as const } })));
  });
});

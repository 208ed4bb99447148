/**
 * Replication across a real network partition: two replicating nodes in network namespaces of their
 * own, joined by a veth pair that the test takes down and brings back. Both sides write during the
 * partition, including the same key; after the heal each pulls what it missed and both hold the
 * same rows, the concurrent key resolved by its policy (last writer wins) on both. Skipped only
 * where `ip netns` is not permitted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../support/systems.js';
import { forkPeer, until } from '../cluster-child.js';
import { namespacePair, netnsPermitted } from '../netns.js';
import { SECRET } from '../support.js';

const pair = namespacePair('rp', 214);
let dir: string | undefined;
afterEach(() => {
  pair.remove();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

type Rows = { count: number; digest: string };

describe.skipIf(!netnsPermitted('rp'))('replication across a network partition', () => {
  it('both sides write while cut off; after the heal both hold the same rows', async () => {
    dir = mkdtempSync(join(tmpdir(), 'molo-repl-netns-'));
    pair.create();
    const script = 'test/nodes/fixtures/replica-node.ts';
    const a = await forkPeer(script, [`ra@${pair.address[0]}:0`, SECRET, join(dir, 'a.db')], pair.wrap(0));
    const b = await forkPeer(script, [`rb@${pair.address[1]}:0`, SECRET, join(dir, 'b.db')], pair.wrap(1));
    await a.run('connect', b.name);
    await a.run('write', 1, 200, 'a', 50);
    await until(async () => (await b.run<Rows>('rows')).count === 200, 15_000);

    // The partition: both ends down; the link goes silent and is detected down.
    pair.cut();
    await until(async () => (await a.run<string[]>('nodes')).length === 0 && (await b.run<string[]>('nodes')).length === 0, 15_000);
    await a.run('write', 1_000, 1_099, 'a-cut', 50);
    await b.run('write', 2_000, 2_099, 'b-cut', 50);
    await b.run('update', 5, 'b wrote 5');
    await sleep(5);
    await a.run('update', 5, 'a wrote 5 later');
    await b.run('remove', 6);
    expect((await a.run<Rows>('rows')).count).toBe(300);

    // Heal: a redials (it asked for b), both pull what the other wrote.
    pair.heal();
    await until(async () => (await a.run<Rows>('rows')).digest === (await b.run<Rows>('rows')).digest, 30_000);
    const rows = await a.run<Rows>('rows');
    expect(rows.count).toBe(399);
    expect(rows.digest).toContain('5:a wrote 5 later');
    expect(rows.digest).not.toContain('|6:');
    // The conflict log holds exactly the loser: b's earlier write of key 5 (on b, which had it; on a, which kept its own).
    for (const side of [a, b]) await until(async () => (await side.run<unknown[]>('conflicts')).length === 1, 10_000);
    expect(await b.run('conflicts')).toEqual([{ key: '5', winner: a.name, loser: b.name, loserData: 'b wrote 5' }]);
    expect(await a.run('conflicts')).toEqual([{ key: '5', winner: a.name, loser: b.name, loserData: 'b wrote 5' }]);
  }, 90_000);
});

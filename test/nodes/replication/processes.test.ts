/**
 * Replication across real OS processes, each node on its own SQLite file: a node SIGKILLed in the
 * middle of catching up is restarted on the same file and name, resumes from the cursor it persisted
 * with the entries it applied (not from zero), and ends with exactly the writer's rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forkPeer, until, type ClusterPeer } from '../cluster-child.js';
import { SECRET } from '../support.js';
import { freePort } from '../../support/ports.js';

const SCRIPT = 'test/nodes/fixtures/replica-node.ts';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-proc-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));


const replica = (name: string, file: string): Promise<ClusterPeer> => forkPeer(SCRIPT, [name, SECRET, join(dir, file)]);

describe('replication between processes', () => {
  it('a node SIGKILLed mid-catch-up resumes from its persisted cursor and converges', async () => {
    const a = await replica(`a@127.0.0.1:${await freePort()}`, 'a.db');
    await a.run('write', 1, 6_000, 'row', 500);
    const bName = `b@127.0.0.1:${await freePort()}`;
    let b = await replica(bName, 'b.db');
    await b.run('connect', a.name);
    // Kill b while it is part way through a's 6,000 entries.
    let atKill = 0;
    await until(async () => (atKill = await b.run<number>('cursor', a.name)) >= 500, 20_000);
    b.child.kill('SIGKILL');
    expect(atKill).toBeLessThan(6_000);
    await new Promise((resolve) => b.child.once('exit', resolve));
    // a goes on writing meanwhile.
    await a.run('write', 6_001, 6_100, 'later', 50);
    await a.run('update', 1, 'row 1, edited');
    await a.run('remove', 2);

    b = await replica(bName, 'b.db');
    const resumedFrom = await b.run<number>('cursor', a.name);
    expect(resumedFrom).toBeGreaterThanOrEqual(500);
    await b.run('connect', a.name);
    const want = await a.run<{ count: number; digest: string }>('rows');
    expect(want.count).toBe(6_099);
    await until(async () => (await b.run<{ digest: string }>('rows')).digest === want.digest, 30_000);
    expect(await b.run<number>('cursor', a.name)).toBe(await a.run<number>('highWater'));
    // And writes made on b reach a.
    await b.run('write', 10_001, 10_010, 'from b', 10);
    await until(async () => (await a.run<{ count: number }>('rows')).count === 6_109, 20_000);
    expect((await a.run<{ digest: string }>('rows')).digest).toBe((await b.run<{ digest: string }>('rows')).digest);
  }, 90_000);

  it('a writer SIGKILLed mid-write keeps exactly one entry per committed row, none for what did not commit', async () => {
    const name = `w@127.0.0.1:${await freePort()}`;
    for (let round = 0; round < 2; round++) {
      const writer = await replica(name, 'w.db');
      const before = (await writer.run<{ rows: number }>('audit')).rows;
      await writer.run('writeForever', 100_000 * (round + 1));
      // A random point in a stream of single-row transactions.
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(Math.random() * 300)));
      writer.child.kill('SIGKILL');
      await new Promise((resolve) => writer.child.once('exit', resolve));
      const reopened = await replica(name, 'w.db');
      const audit = await reopened.run<{ rows: number; entries: number; withoutEntry: string[]; entryWithoutRow: string[]; gapless: boolean; head: number }>('audit');
      expect(audit.rows).toBeGreaterThan(before);
      expect(audit.withoutEntry).toEqual([]);
      expect(audit.entryWithoutRow).toEqual([]);
      expect(audit.entries).toBe(audit.rows);
      expect(audit.gapless).toBe(true);
      expect(audit.head).toBe(audit.entries);
      reopened.child.kill('SIGKILL');
      await new Promise((resolve) => reopened.child.once('exit', resolve));
    }
  }, 90_000);
});

/**
 * What an acknowledgement costs on disk, per `synchronous` setting, for the three SQLite-backed
 * stores (streams, task queue, KV): a real child process makes acknowledged writes one at a time
 * under strace, which logs every fsync/fdatasync (on any thread) and the child's own `ACK` lines.
 * On `full` (each store's default) every acknowledgement must come after an fsync that followed the
 * acknowledgement before it; on `normal` commits are not synced (a checkpoint syncs the WAL later).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForChildren } from './child-build.js';

const STRACE = '/usr/bin/strace';
const WRITES = 40;
const STORES = ['streams', 'tasks', 'kv'] as const;
type Store = (typeof STORES)[number];

interface Phase {
  /** fsync/fdatasync calls completed between the store's first write and its last acknowledgement (closing is not counted). */
  syncs: number;
  acks: number;
  /** Acknowledgements with no fsync completed since the one before (or since the phase began). */
  unsynced: number;
}

let build: ReturnType<typeof buildForChildren>;
const dirs: string[] = [];

beforeAll(() => {
  build = buildForChildren('test/bus/streams/fixtures/durability-child.ts');
});
afterAll(() => {
  build?.remove();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the child under strace with `synchronous` (undefined: the stores' defaults); answers each store's phase. */
async function traced(synchronous: 'full' | 'normal' | undefined): Promise<Record<Store, Phase>> {
  const dir = mkdtempSync(join(tmpdir(), 'molo-durability-'));
  dirs.push(dir);
  const log = join(dir, 'strace.log');
  const args = ['-f', '-qq', '--seccomp-bpf', '-s', '64', '-e', 'trace=fsync,fdatasync,write', '-o', log, process.execPath, build.script];
  const env = { ...process.env, DURABILITY_DIR: dir, DURABILITY_N: String(WRITES), DURABILITY_SYNC: synchronous ?? '' };
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(STRACE, args, { env, timeout: 25_000 }, (error, out, err) => (error === null ? resolve(out) : reject(new Error(`child failed: ${error.message}\n${err.slice(-2_000)}`))));
  });
  expect(stdout).toContain('DONE');
  return phases(readFileSync(log, 'utf8'));
}

/** Reads the strace log in order: an fsync counts when it returns, an acknowledgement when its line is written. */
function phases(log: string): Record<Store, Phase> {
  const result = {} as Record<Store, Phase>;
  let current: Phase | undefined;
  /** fsyncs since the last marker: counted into the phase when an acknowledgement follows them. */
  let pending = 0;
  for (const line of log.split('\n')) {
    const marker = /write\(1, "(PHASE|ACK) (\w+)/.exec(line);
    if (marker !== null) {
      if (marker[1] === 'PHASE') {
        current = { syncs: 0, acks: 0, unsynced: 0 };
        result[marker[2] as Store] = current;
      } else if (current !== undefined) {
        current.acks++;
        current.syncs += pending;
        if (pending === 0) current.unsynced++;
      }
      pending = 0;
      continue;
    }
    // A completed call: `fsync(12) = 0` or `<... fdatasync resumed>) = 0`.
    if (/\b(fsync|fdatasync)\b/.test(line) && /\) += 0\b/.test(line)) pending++;
  }
  return result;
}

describe.skipIf(!existsSync(STRACE) || process.platform !== 'linux')('fsyncs per acknowledged write (strace)', () => {
  it('by default (full) every store fsyncs before each acknowledgement', async () => {
    const result = await traced(undefined);
    for (const store of STORES) {
      expect(result[store], store).toBeDefined();
      expect(result[store].acks, store).toBe(WRITES);
      expect(result[store].syncs, store).toBeGreaterThanOrEqual(WRITES);
      expect(result[store].unsynced, store).toBe(0);
    }
  }, 30_000);

  it("synchronous: 'full' fsyncs before each acknowledgement", async () => {
    const result = await traced('full');
    for (const store of STORES) {
      expect(result[store].acks, store).toBe(WRITES);
      expect(result[store].syncs, store).toBeGreaterThanOrEqual(WRITES);
      expect(result[store].unsynced, store).toBe(0);
    }
  }, 30_000);

  it("synchronous: 'normal' acknowledges without fsyncing each commit", async () => {
    const result = await traced('normal');
    for (const store of STORES) {
      expect(result[store].acks, store).toBe(WRITES);
      // Only a checkpoint syncs (none is due for 40 small commits): far fewer than one per write.
      expect(result[store].syncs, store).toBeLessThan(WRITES / 4);
    }
  }, 30_000);
});

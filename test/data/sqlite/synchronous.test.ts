/**
 * The `synchronous` option: what the writer's PRAGMA reads back for each setting, the default, and
 * the refusal of a value or key nobody reads (a misspelt option would otherwise be ignored and the
 * weaker default used without a word). That commits are really fsynced is test/bus/streams/durability.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { InvalidDataConfig, type SqliteConfig } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

let system: ActorSystem;
let temp: TempDatabase | undefined;

beforeEach(() => {
  system = testSystem();
});

afterEach(async () => {
  await temp?.dispose();
  temp = undefined;
});

/** PRAGMA synchronous on the writer (a write transaction runs there): 2 is FULL, 1 NORMAL. */
async function writerSynchronous(db: TempDatabase['db']): Promise<number> {
  return db.transaction(async (tx) => Number((await tx.query('PRAGMA synchronous')).rows[0]!.synchronous));
}

describe('synchronous', () => {
  it("'full' sets PRAGMA synchronous = FULL (2) on the writer", async () => {
    temp = await openTemp(system, { synchronous: 'full', readers: 1 });
    expect(await writerSynchronous(temp.db)).toBe(2);
    expect(temp.db.synchronous).toBe('full');
  });

  it("'normal' sets NORMAL (1), and is the default of an application's database", async () => {
    temp = await openTemp(system, { synchronous: 'normal', readers: 1 });
    expect(await writerSynchronous(temp.db)).toBe(1);
    await temp.dispose();
    temp = await openTemp(system, { readers: 1 });
    expect(await writerSynchronous(temp.db)).toBe(1);
    expect(temp.db.synchronous).toBe('normal');
  });

  it('refuses any other value, naming the option', async () => {
    for (const value of ['extra', 'FULL', 2, true]) {
      const failure = await openTemp(system, { synchronous: value as unknown as SqliteConfig['synchronous'] }).catch((error: unknown) => error);
      expect(failure, String(value)).toBeInstanceOf(InvalidDataConfig);
      expect((failure as InvalidDataConfig).option).toBe('sqlite.synchronous');
      expect((failure as Error).message).toContain("'full' or 'normal'");
    }
  });

  it('refuses an unknown key, naming the nearest known one', async () => {
    const failure = await openTemp(system, { synchronus: 'full' } as Partial<SqliteConfig>).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidDataConfig);
    expect((failure as InvalidDataConfig).option).toBe('sqlite.synchronus');
    expect((failure as Error).message).toContain('did you mean synchronous?');
    const far = await openTemp(system, { durability: 'full' } as Partial<SqliteConfig>).catch((error: unknown) => error);
    expect((far as InvalidDataConfig).option).toBe('sqlite.durability');
    expect((far as Error).message).toMatch(/unknown option$/);
  });
});

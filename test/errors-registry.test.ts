import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as molo from '../src/index.js';

/**
 * Every area keeps one registry of stable error codes (`<Area>ErrorCode`). Each code must have
 * exactly one exported error class (its static `code`), and a row in docs/errors.md naming both.
 */
const exported = molo as unknown as Record<string, unknown>;
const registries = Object.entries(exported).filter(
  ([name, value]) => name.endsWith('ErrorCode') && typeof value === 'object' && value !== null,
) as [string, Record<string, string>][];
const errorClasses = Object.entries(exported).filter(
  ([, value]) => typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof molo.MoloError,
) as [string, { code?: string }][];
const docRows = new Map<string, string>();
for (const match of readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8').matchAll(/^\| `([A-Z0-9_]+)` \| `(\w+)` \|/gm)) {
  docRows.set(match[1]!, match[2]!);
}

describe('error registries', () => {
  it('has registries for the areas', () => {
    expect(registries.map(([name]) => name)).toEqual(expect.arrayContaining(['ActorErrorCode', 'BehaviourErrorCode']));
  });

  it('codes are unique across areas', () => {
    const codes = registries.flatMap(([, registry]) => Object.values(registry));
    expect(new Set(codes).size).toBe(codes.length);
  });

  for (const [registryName, registry] of registries) {
    for (const code of Object.values(registry)) {
      it(`${registryName}: ${code} has one exported class and is documented with it`, () => {
        const classes = errorClasses.filter(([, cls]) => cls.code === code).map(([name]) => name);
        expect(classes).toHaveLength(1);
        expect(docRows.get(code), `docs/errors.md row for ${code}`).toBe(classes[0]);
      });
    }
  }

  it('documents no code that does not exist', () => {
    const codes = new Set(registries.flatMap(([, registry]) => Object.values(registry)));
    expect([...docRows.keys()].filter((code) => !codes.has(code))).toEqual([]);
  });

  it('every exported error class carries a registered code', () => {
    const codes = new Set(registries.flatMap(([, registry]) => Object.values(registry)));
    expect(errorClasses.filter(([, cls]) => !codes.has(cls.code ?? '')).map(([name]) => name)).toEqual([]);
  });
});

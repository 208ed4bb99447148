/**
 * docs/orm-types.md is generated from TYPE_MAPPING: this fails when someone changes one without
 * the other (regenerate with `npx tsx scripts/gen-orm-types.ts`), and checks the table's shape.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIELD_KINDS, renderTypesDoc, TYPE_MAPPING } from '../../../src/data/orm/index.js';

describe('ORM type mapping', () => {
  it('docs/orm-types.md matches the table in the code', () => {
    const doc = readFileSync(new URL('../../../docs/orm-types.md', import.meta.url), 'utf8');
    expect(doc, 'docs/orm-types.md is stale: run npx tsx scripts/gen-orm-types.ts').toBe(renderTypesDoc());
  });

  it('has one row per field kind, each with both backends', () => {
    expect(Object.keys(TYPE_MAPPING).sort()).toEqual([...FIELD_KINDS].sort());
    const doc = renderTypesDoc();
    for (const kind of FIELD_KINDS) expect(doc).toContain(`\`${TYPE_MAPPING[kind].builder}\``);
  });
});

/**
 * Writes docs/orm-types.md from the ORM's type-mapping table (src/data/orm/types.ts), the single
 * source of truth; test/data/orm/types-doc.test.ts fails when the page is stale.
 *
 *   npx tsx scripts/gen-orm-types.ts
 */
import { writeFileSync } from 'node:fs';
import { renderTypesDoc } from '../src/data/orm/types.js';

const target = new URL('../docs/orm-types.md', import.meta.url);
writeFileSync(target, renderTypesDoc());
console.log(`wrote ${target.pathname}`);

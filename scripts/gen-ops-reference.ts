/**
 * Rewrites the generated tables of docs/operations.md (every metric, every cap) from the code;
 * test/docs/operations.test.ts fails when the page is stale.
 *
 *   npx tsx scripts/gen-ops-reference.ts
 */
import { writeFileSync } from 'node:fs';
import { OPERATIONS_PAGE, renderOperationsPage } from './ops-reference.js';

writeFileSync(OPERATIONS_PAGE, await renderOperationsPage());
console.log(`wrote ${OPERATIONS_PAGE}`);

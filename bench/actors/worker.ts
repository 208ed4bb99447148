/**
 * Runs one case for one JavaScript implementation in a fresh process and prints its row as
 * `ROW <json>`. Started by suite.ts as `node --expose-gc --import tsx worker.ts <case> <impl> <full|quick>`,
 * so every measurement has its own heap and JIT state, and `idle` can force full collections.
 */
import { CASES, sizesFor, type CaseName, type ImplCases } from './cases.js';
import { moloCases } from './molo.js';
import { rawCases } from './raw.js';
import { xstateCases, xstateMachineCases } from './xstate.js';

const IMPLEMENTATIONS: Readonly<Record<string, ImplCases>> = { molo: moloCases, 'xstate-callback': xstateCases, 'xstate-machine': xstateMachineCases, raw: rawCases };

const [name, impl, mode] = process.argv.slice(2);
const cases = impl === undefined ? undefined : IMPLEMENTATIONS[impl];
if (!CASES.includes(name as CaseName) || cases === undefined || (mode !== 'full' && mode !== 'quick')) {
  console.error('usage: worker.ts <case> <molo|xstate-callback|xstate-machine|raw> <full|quick>');
  process.exit(2);
}
const run = cases[name as CaseName];
if (run === undefined) throw new Error(`${impl} has no ${name} case`);
const row = await run(sizesFor(name as CaseName, mode === 'quick'));
process.stdout.write(`ROW ${JSON.stringify(row)}\n`, () => process.exit(0));

/**
 * Benchmark runner: `npm run bench -- <suite> [--cases a,b] [--quick]`.
 * Runs the suite, prints its table and writes bench/results/<suite>.json (an array of rows).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actorsSuite } from './actors/suite.js';
import { dataSuite } from './data/suite.js';
import { kvSuite } from './kv/suite.js';
import { nodesSuite } from './nodes/suite.js';
import { ormSuite } from './orm/suite.js';
import { programsSuite } from './programs/suite.js';
import { replicationSuite } from './replication/suite.js';
import { roomsSuite } from './rooms/suite.js';
import { streamsSuite } from './streams/suite.js';
import { tasksSuite } from './tasks/suite.js';
import { telemetrySuite } from './telemetry/suite.js';
import type { Suite } from './suite.js';

const SUITES: readonly Suite[] = [actorsSuite, programsSuite, telemetrySuite, dataSuite, kvSuite, ormSuite, streamsSuite, tasksSuite, nodesSuite, replicationSuite, roomsSuite];

const USAGE = 'usage: npm run bench -- <suite> [--cases a,b,...] [--quick]';

function listSuites(): string {
  return ['suites:', ...SUITES.map((suite) => `  ${suite.name.padEnd(10)} ${suite.description} (cases: ${suite.cases.join(', ')})`)].join('\n');
}

function fail(message: string): never {
  console.error(`${message}\n${USAGE}\n${listSuites()}`);
  process.exit(2);
}

interface Arguments {
  readonly suite: string | undefined;
  readonly cases: string[] | undefined;
  readonly quick: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  let suite: string | undefined;
  let cases: string[] | undefined;
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--cases' || arg.startsWith('--cases=')) {
      const value = arg === '--cases' ? argv[++i] : arg.slice('--cases='.length);
      if (value === undefined || value.length === 0) fail('--cases needs a comma-separated list');
      cases = value.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
    } else if (arg === '--help' || arg === '-h') {
      console.log(`${USAGE}\n${listSuites()}`);
      process.exit(0);
    } else if (arg.startsWith('-')) fail(`unknown option ${arg}`);
    else if (suite === undefined) suite = arg;
    else fail(`unexpected argument ${arg}`);
  }
  return { suite, cases, quick };
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  if (args.suite === undefined) fail('no suite given');
  const suite = SUITES.find((candidate) => candidate.name === args.suite);
  if (suite === undefined) fail(`unknown suite '${args.suite}'`);
  if (args.cases !== undefined) {
    const unknown = args.cases.filter((name) => !suite.cases.includes(name));
    if (unknown.length > 0) fail(`unknown case(s) for ${suite.name}: ${unknown.join(', ')}`);
  }

  const result = await suite.run({ quick: args.quick, cases: args.cases });
  console.log(result.report);

  const file = join(dirname(fileURLToPath(import.meta.url)), 'results', `${suite.name}.json`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(result.rows, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  if (result.failed) process.exitCode = 1;
}

await main();

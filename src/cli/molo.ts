#!/usr/bin/env node
// `molo`: the command line of a running node's admin surface. `molo help` lists the commands.
import { runMigrateCli } from './migrate.js';
import { runCli } from './run.js';

const argv = process.argv.slice(2);
const io = {
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
  env: process.env,
};
// `molo migrate ...` works on a database, not on a node's admin surface.
process.exitCode = argv[0] === 'migrate' ? await runMigrateCli(argv.slice(1), io) : await runCli(argv, io);

#!/usr/bin/env node
// `molo`: the command line of a running node's admin surface. `molo help` lists the commands.
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});

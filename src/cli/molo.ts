#!/usr/bin/env node
// `molo`: the command line of a running node's admin surface. `molo help` lists the commands.
import { runCli } from './run.js';
import { moloVersion } from './version.js';

const argv = process.argv.slice(2);
const io = {
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
  env: process.env,
  isTTY: process.stdout.isTTY === true,
  // MOLO_PROGRESS=0 keeps the bar off a terminal too (plain lines instead).
  ...(process.stderr.isTTY === true && process.env['MOLO_PROGRESS'] !== '0' ? { progressStream: process.stderr } : {}),
};
if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
  io.stdout(`${moloVersion()}\n`);
} else if (argv[0] === 'migrate') {
  // `molo migrate ...` works on a database, not on a node's admin surface; the data layer it needs
  // is loaded only for it, so the other commands start fast.
  const { runMigrateCli } = await import('./migrate.js');
  process.exitCode = await runMigrateCli(argv.slice(1), io);
} else if (argv[0] === 'tasks') {
  const { runTasksCli } = await import('./tasks.js');
  process.exitCode = await runTasksCli(argv.slice(1), io);
} else if (argv[0] === 'streams' || argv[0] === 'consumers') {
  const { runStreamsCli } = await import('./streams.js');
  process.exitCode = await runStreamsCli(argv[0], argv.slice(1), io);
} else if (argv[0] === 'sup' || argv[0] === 'programs') {
  const { runOpsCli } = await import('./ops.js');
  process.exitCode = await runOpsCli(argv[0], argv.slice(1), io);
} else {
  process.exitCode = await runCli(argv, io);
}

/**
 * A cluster of three Molo nodes, each its own OS process on loopback:
 * - remote calls to a worker spawned on another node;
 * - a supervisor on node a supervising a worker spawned on node b; b is killed with SIGKILL, a sees
 *   `noconnection`, and the supervisor restarts the worker on node c;
 * - a cluster-wide publish seen on every node still up; a global name and a process group;
 * - `molo nodes` (and `molo tree --node`) against node a's admin surface.
 * Then it keeps running until Ctrl-C (or stops at once with --once), and stops every node cleanly.
 * Run: npm run example examples/cluster/main.ts  (or node --conditions=molo-source --import tsx examples/cluster/main.ts [--once])
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

type Reply = Record<string, unknown>;
interface Member {
  readonly label: string;
  readonly child: ChildProcess;
  readonly replies: Reply[];
  name: string;
  admin: string;
}

const once = process.argv.includes('--once');
const script = fileURLToPath(new URL('./node.ts', import.meta.url));
const cliScript = fileURLToPath(new URL('../../src/cli/molo.ts', import.meta.url));
const members = new Map<string, Member>();

function start(label: string): Member {
  // The nodes run with this process's Node flags (the molo-source condition, tsx).
  const child = fork(script, [label], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const member: Member = { label, child, replies: [], name: '', admin: '' };
  child.on('message', (message: Reply) => member.replies.push(message));
  members.set(label, member);
  return member;
}

/** Waits for a reply of `member` with `key`, taking it out of its queue. */
async function reply(member: Member, key: string, timeoutMs = 20_000): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = member.replies.findIndex((message) => key in message);
    if (index >= 0) return member.replies.splice(index, 1)[0]!;
    const failed = member.replies.find((message) => 'failed' in message);
    if (failed !== undefined) throw new Error(`node ${member.label} failed: ${String(failed['failed'])}`);
    if (Date.now() > deadline || member.child.exitCode !== null) throw new Error(`node ${member.label}: no '${key}' in time`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs the `molo` command line (src/cli/molo.ts) as a process of its own and prints what it prints. */
function molo(...args: string[]): Promise<void> {
  console.log(`$ molo ${args.join(' ')}`);
  return new Promise((resolve) => {
    execFile(process.execPath, [...process.execArgv, cliScript, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      process.stdout.write(stdout);
      if (error !== null) process.stderr.write(stderr);
      resolve();
    });
  });
}

// A node already stopping (Ctrl-C reaches the whole process group) may have closed its channel: ignored.
const command = (member: Member, cmd: string, ...args: string[]): void => void member.child.send({ cmd, args }, () => {});

let stopping: Promise<never> | undefined;
function stopAll(code: number): Promise<never> {
  stopping ??= (async () => {
    const live = [...members.values()].filter((member) => member.child.exitCode === null && member.child.signalCode === null);
    await Promise.all(
      live.map(
        (member) =>
          new Promise<void>((resolve) => {
            member.child.once('exit', () => resolve());
            if (member.child.connected) command(member, 'stop');
            // A node that does not stop in time is killed: nothing outlives the example.
            setTimeout(() => member.child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    console.log('all nodes stopped');
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  const [a, b, c] = ['a', 'b', 'c'].map(start) as [Member, Member, Member];
  for (const member of [a, b, c]) {
    const ready = await reply(member, 'ready');
    member.name = String(ready['ready']);
    member.admin = String(ready['admin']);
    console.log(`node ${member.name} up (pid ${String(ready['pid'])}), admin ${member.admin}`);
  }
  command(a, 'connect', b.name, c.name);
  command(b, 'connect', c.name);
  await Promise.all([reply(a, 'connected'), reply(b, 'connected')]);

  command(a, 'scenario', b.name, c.name);
  await reply(a, 'phase');
  console.log(`killing node ${b.name} (pid ${String(b.child.pid)}) with SIGKILL`);
  b.child.kill('SIGKILL');
  command(a, 'afterKill', c.name);
  await reply(a, 'phase', 30_000);
  await Promise.all([reply(a, 'news'), reply(c, 'news')]);
  console.log('the cluster-wide publish was seen on a and c');

  command(c, 'whereisLeader');
  const leader = await reply(c, 'leader');
  console.log(`on c: global 'leader' is ${String(leader['leader'])}; group 'supervisors': ${String(leader['members'])}`);

  await molo('nodes', '--url', a.admin);
  await molo('tree', '--node', a.name, '--url', c.admin);

  if (once) await stopAll(0);
  console.log('cluster running (a, c); Ctrl-C stops it');
} catch (error) {
  console.error(`cluster example failed: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
}

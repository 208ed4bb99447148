/**
 * A cluster of three Molo nodes, each its own OS process on loopback:
 * - remote calls to a worker spawned on another node;
 * - a supervisor on node a supervising a worker spawned on node b; b is killed with SIGKILL, a sees
 *   `noconnection`, and the supervisor restarts the worker on node c;
 * - a cluster-wide publish seen on every node still up; a global name and a process group;
 * - `molo nodes` (and `molo tree --node`) against node a's admin surface.
 * Then it keeps running until Ctrl-C (or stops at once with --once), and stops every node cleanly.
 * Run: node --import tsx examples/cluster/main.ts [--once]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/run.js';

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
const members = new Map<string, Member>();

function start(label: string): Member {
  const child = fork(script, [label], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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

const command = (member: Member, cmd: string, ...args: string[]): void => void member.child.send({ cmd, args });

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

  const io = { stdout: (text: string) => void process.stdout.write(text), stderr: (text: string) => void process.stderr.write(text), env: {} };
  console.log(`$ molo nodes --url ${a.admin}`);
  await runCli(['nodes', '--url', a.admin], io);
  console.log(`$ molo tree --node ${a.name} --url ${c.admin}`);
  await runCli(['tree', '--node', a.name, '--url', c.admin], io);

  if (once) await stopAll(0);
  console.log('cluster running (a, c); Ctrl-C stops it');
} catch (error) {
  console.error(`cluster example failed: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
}

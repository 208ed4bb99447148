// Simulates Ctrl-C on `npm start`: SIGINT to the whole process group, as a terminal sends it.
import { spawn } from 'node:child_process';
const cmd = process.argv[2] ?? 'npm';
const args = process.argv.slice(3).length ? process.argv.slice(3) : ['start'];
const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MOLO_DEMO_MS: '0' } });
let out = '';
child.stdout.on('data', (d) => { out += d; });
child.stderr.on('data', (d) => { out += d; });
const started = Date.now();
const timer = setInterval(() => {
  if (/Ctrl-C stops it/.test(out)) {
    clearInterval(timer);
    setTimeout(() => { console.log('sending SIGINT to group after', Date.now() - started, 'ms'); process.kill(-child.pid, 'SIGINT'); }, 500);
  }
}, 50);
child.on('exit', (code, signal) => {
  console.log('exit', code, signal);
  console.log(out.split('\n').filter((l) => /stopped|error|Error|forced|deadline|node\./.test(l)).slice(-8).join('\n'));
  process.exit(0);
});
setTimeout(() => { console.log('timeout; output:', out.slice(-2000)); process.kill(-child.pid, 'SIGKILL'); }, 90_000);

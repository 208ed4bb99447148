/** Runs a measuring child process and takes its `ROW <json>` line. */
import { spawn } from 'node:child_process';
import type { Row } from '../suite.js';

const ROW_PREFIX = 'ROW ';

export function runProcess(command: string, args: readonly string[], label: string, cwd?: string): Promise<Row> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = stdout.split('\n').find((candidate) => candidate.startsWith(ROW_PREFIX));
      if (code === 0 && line !== undefined) {
        try {
          resolve(JSON.parse(line.slice(ROW_PREFIX.length)) as Row);
          return;
        } catch (error) {
          reject(new Error(`${label}: unreadable row ${line}: ${String(error)}`));
          return;
        }
      }
      const output = `${stderr}\n${stdout}`.trim().split('\n').slice(-15).join('\n');
      reject(new Error(`${label} exited with ${signal ?? code}${output ? `:\n${output}` : ''}`));
    });
  });
}

import { expect } from 'vitest';
import type { ScriptResult } from './run-script.js';

/** An example ran cleanly (exit 0, nothing on stderr) and printed each of `lines`, in this order. */
export function expectCleanRun(result: ScriptResult, lines: readonly (string | RegExp)[]): void {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  let from = 0;
  for (const line of lines) {
    const rest = result.stdout.slice(from);
    const match = typeof line === 'string' ? { index: rest.indexOf(line), length: line.length } : matchOf(rest, line);
    expect(match.index, `missing (after offset ${from}): ${String(line)}\n--- stdout:\n${result.stdout}`).toBeGreaterThanOrEqual(0);
    from += match.index + match.length;
  }
}

function matchOf(text: string, pattern: RegExp): { index: number; length: number } {
  const found = pattern.exec(text);
  return found === null ? { index: -1, length: 0 } : { index: found.index, length: found[0].length };
}

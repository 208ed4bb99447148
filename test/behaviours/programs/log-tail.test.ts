/** The program log tail's bounds: newest lines kept by count and by size, drops counted, order kept. */
import { describe, expect, it } from 'vitest';
import { LogTail, TAIL_LIMITS } from '../../../src/behaviours/programs/log-tail.js';

const line = (n: number, text = `line ${n}`) => ({ at: n, stream: 'stdout' as const, pid: 1, line: text });

describe('LogTail', () => {
  it('keeps the newest maxLines lines, oldest first, and counts the rest as dropped', () => {
    const tail = new LogTail();
    const total = TAIL_LIMITS.maxLines * 3 + 7;
    for (let n = 1; n <= total; n++) tail.push(line(n));
    const all = tail.last(TAIL_LIMITS.maxLines);
    expect(all.lines).toHaveLength(TAIL_LIMITS.maxLines);
    expect(all.lines[0]!.at).toBe(total - TAIL_LIMITS.maxLines + 1);
    expect(all.lines.at(-1)!.at).toBe(total);
    expect(all.dropped).toBe(total - TAIL_LIMITS.maxLines);
    const three = tail.last(3);
    expect(three.lines.map((entry) => entry.at)).toEqual([total - 2, total - 1, total]);
    expect(three.dropped).toBe(total - 3);
  });

  it('drops old lines once their text passes maxChars, but always keeps the newest', () => {
    const tail = new LogTail();
    const big = 'x'.repeat(TAIL_LIMITS.maxChars / 4);
    for (let n = 1; n <= 10; n++) tail.push(line(n, big));
    const kept = tail.last(100);
    expect(kept.lines.map((entry) => entry.at)).toEqual([7, 8, 9, 10]);
    expect(kept.dropped).toBe(6);
    tail.push(line(11, 'y'.repeat(TAIL_LIMITS.maxChars * 2)));
    expect(tail.last(100).lines.map((entry) => entry.at)).toEqual([11]);
  });
});

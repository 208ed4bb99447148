/**
 * The last lines a program wrote (stdout and stderr, across its runs), kept by its supervisor so an
 * operator can read why it crashed without the node's log files (`molo programs logs`). Bounded by
 * lines and by bytes: a chatty program costs at most TAIL_LIMITS per program, oldest lines first out.
 *
 * Lines are appended from the process's stream callbacks, between the actor's turns, rather than
 * posted as messages: a message per line would double a chatty program's mailbox traffic, and the
 * actor only ever reads the ring (single-threaded, so a read never sees half a line).
 */

/** Per program: lines kept, and their UTF-16 length in total (about bytes for ASCII logs). */
export const TAIL_LIMITS = { maxLines: 1_000, maxChars: 256 * 1024 } as const;

export interface ProgramLogLine {
  /** Wall-clock ms when the supervisor read the line. */
  readonly at: number;
  readonly stream: 'stdout' | 'stderr';
  readonly pid: number | undefined;
  readonly line: string;
}

export interface ProgramLogs {
  readonly name: string;
  /** Oldest first. */
  readonly lines: readonly ProgramLogLine[];
  /** Lines written since the supervisor started that are no longer kept. */
  readonly dropped: number;
}

export class LogTail {
  #lines: ProgramLogLine[] = [];
  /** Index of the oldest kept line in #lines (shifting an array per line would be O(n)). */
  #head = 0;
  #chars = 0;
  #dropped = 0;

  push(line: ProgramLogLine): void {
    this.#lines.push(line);
    this.#chars += line.line.length;
    while (this.#lines.length - this.#head > TAIL_LIMITS.maxLines || (this.#chars > TAIL_LIMITS.maxChars && this.#lines.length - this.#head > 1)) {
      this.#chars -= this.#lines[this.#head]!.line.length;
      this.#head++;
      this.#dropped++;
    }
    // Compact once the dead prefix is as long as what is kept.
    if (this.#head > TAIL_LIMITS.maxLines) {
      this.#lines = this.#lines.slice(this.#head);
      this.#head = 0;
    }
  }

  /** The newest `limit` lines, oldest first. */
  last(limit: number): { lines: ProgramLogLine[]; dropped: number } {
    const start = Math.max(this.#head, this.#lines.length - limit);
    return { lines: this.#lines.slice(start), dropped: this.#dropped + (start - this.#head) };
  }
}

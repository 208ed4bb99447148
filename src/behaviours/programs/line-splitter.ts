/**
 * Splits a byte stream into lines for the logger. A line ends at `\n` (a `\r` before it is
 * dropped); a line longer than `maxLineBytes` is emitted in pieces of at most that many bytes,
 * each cut at a UTF-8 character boundary, so memory per stream stays bounded.
 */
export class LineSplitter {
  readonly #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(
    readonly maxLineBytes: number,
    readonly emit: (line: string) => void,
  ) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 4) throw new RangeError('maxLineBytes must be an integer >= 4');
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.#flush(true);
      start = newline + 1;
    }
  }

  /** Emits what is left (a last line without `\n`). */
  end(): void {
    if (this.#pendingBytes > 0) this.#flush(true);
  }

  #append(bytes: Buffer): void {
    let rest = bytes;
    while (this.#pendingBytes + rest.length > this.maxLineBytes) {
      const room = this.maxLineBytes - this.#pendingBytes;
      const joined = Buffer.concat([...this.#pending, rest.subarray(0, room)]);
      const cut = utf8Boundary(joined, joined.length);
      this.#pending.length = 0;
      this.#pendingBytes = 0;
      this.emit(joined.subarray(0, cut).toString('utf8'));
      // Bytes of a character cut in two go to the next piece.
      const carried = joined.subarray(cut);
      if (carried.length > 0) {
        this.#pending.push(Buffer.from(carried));
        this.#pendingBytes = carried.length;
      }
      rest = rest.subarray(room);
    }
    if (rest.length > 0) {
      this.#pending.push(Buffer.from(rest));
      this.#pendingBytes += rest.length;
    }
  }

  #flush(lineEnded: boolean): void {
    let line = Buffer.concat(this.#pending);
    this.#pending.length = 0;
    this.#pendingBytes = 0;
    if (lineEnded && line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    this.emit(line.toString('utf8'));
  }
}

/** The largest index <= `end` that does not split a UTF-8 sequence (0 never happens for valid limits >= 4). */
function utf8Boundary(bytes: Buffer, end: number): number {
  // Walk back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  let index = end;
  let back = 0;
  while (index > 0 && back < 4 && ((bytes[index - 1] ?? 0) & 0xc0) === 0x80) {
    index--;
    back++;
  }
  if (index === 0) return end;
  const lead = bytes[index - 1] ?? 0;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  // The last character is complete: keep it; otherwise cut before its lead byte.
  return back + 1 >= length ? end : index - 1;
}

/**
 * Progress of long `molo` work (migrations, bulk enqueue, purges): a cli-progress bar on stderr
 * when stderr is a terminal; otherwise one plain line per step, so logs and scripts reading
 * stderr get the same facts without cursor escapes. stdout is never touched: `--json` stays clean.
 */
import { SingleBar } from 'cli-progress';
import type { CliIo } from './run.js';

export interface Progress {
  /** `done` of `total` now, with `detail` (e.g. duplicates so far) after it. */
  update(done: number, detail?: string): void;
  stop(): void;
}

/** A progress display of `label` for `total` steps. */
export function startProgress(io: CliIo, label: string, total: number): Progress {
  const terminal = io.progressStream;
  if (terminal === undefined) {
    return {
      update: (done, detail) => io.stderr(`${label} ${done}/${total}${detail === undefined || detail === '' ? '' : ` ${detail}`}\n`),
      stop: () => {},
    };
  }
  const bar = new SingleBar({
    stream: terminal,
    format: `${label} [{bar}] {value}/{total} {percentage}% eta {eta_formatted} {detail}`,
    hideCursor: true,
    clearOnComplete: false,
    barsize: 30,
  });
  bar.start(total, 0, { detail: '' });
  return {
    update: (done, detail) => bar.update(done, { detail: detail ?? '' }),
    stop: () => bar.stop(),
  };
}

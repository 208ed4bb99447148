/**
 * Two network namespaces joined by a veth pair, for partition tests: made and removed by the test,
 * the link cut (both ends down) and healed. Names carry `label` and the test process's pid, so two
 * test files never share a namespace.
 */
import { execFileSync } from 'node:child_process';

const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: 'pipe' });
const inNs = (space: string, ...args: string[]): void => ip('netns', 'exec', space, 'ip', ...args);

export interface NamespacePair {
  /** The two namespaces. */
  readonly ns: readonly [string, string];
  /** Each side's address (`<subnet>.1` and `.2`). */
  readonly address: readonly [string, string];
  /** The command prefix that runs a program inside side `i`. */
  wrap(i: 0 | 1): string[];
  /** Creates both namespaces and the veth pair between them, up. */
  create(): void;
  /** Both ends down (a silent partition) or up again. */
  cut(): void;
  heal(): void;
  remove(): void;
}

/** Whether this machine lets the test make namespaces (root with iproute2). */
export function netnsPermitted(label: string): boolean {
  const probe = `molo_probe_${label}_${process.pid % 100_000}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return true;
  } catch {
    return false;
  }
}

/** `label`: two letters that tell this file's namespaces apart; `octet`: the 10.<octet>.x.0/24 subnet. */
export function namespacePair(label: string, octet: number): NamespacePair {
  const tag = String(process.pid % 100_000);
  const ns = [`molo_${label}a_${tag}`, `molo_${label}b_${tag}`] as const;
  const veth = [`m${label}a${tag}`, `m${label}b${tag}`] as const;
  const subnet = `10.${octet}.${process.pid % 250}`;
  const link = (state: 'up' | 'down'): void => {
    for (const i of [0, 1] as const) inNs(ns[i], 'link', 'set', veth[i], state);
  };
  const remove = (): void => {
    for (const space of ns) {
      try {
        ip('netns', 'del', space);
      } catch {
        // Not made (or already gone).
      }
    }
  };
  return {
    ns,
    address: [`${subnet}.1`, `${subnet}.2`],
    wrap: (i) => ['ip', 'netns', 'exec', ns[i]],
    create() {
      remove();
      ip('netns', 'add', ns[0]);
      ip('netns', 'add', ns[1]);
      ip('link', 'add', veth[0], 'type', 'veth', 'peer', 'name', veth[1]);
      for (const i of [0, 1] as const) {
        ip('link', 'set', veth[i], 'netns', ns[i]);
        inNs(ns[i], 'addr', 'add', `${subnet}.${i + 1}/24`, 'dev', veth[i]);
        inNs(ns[i], 'link', 'set', veth[i], 'up');
        inNs(ns[i], 'link', 'set', 'lo', 'up');
      }
    },
    cut: () => link('down'),
    heal: () => link('up'),
    remove,
  };
}

import type { ActorRuntime, ProcessInfo, Ref } from '../actors/index.js';
import {
  Supervisor,
  type ChildStatus,
  type ChildType,
  type LifecycleState,
  type RestartType,
  type Strategy,
  type SupervisorStatus,
} from '../behaviours/index.js';
import { AdminErrorCode, SnapshotTimeout } from './errors.js';
import { ByteBudget } from './snapshot-budget.js';
import type { SnapshotProvider } from './snapshot-provider.js';

/** The behaviour name a Supervisor runs under; only such processes are asked `Supervisor.status`. */
export const SUPERVISOR_BEHAVIOUR = 'Supervisor';
/** Nesting deeper than this is not walked (a guard, not a limit anyone should reach). */
export const MAX_TREE_DEPTH = 64;

/** What the kernel says about one process (`ActorSystem.info`), trimmed for snapshots. */
export type ProcessSummary = Pick<ProcessInfo, 'behaviour' | 'status' | 'mailboxLength' | 'mailboxCapacity' | 'messagesHandled' | 'messagesDropped'> & {
  readonly name: string | null;
};

/** A supervisor's own figures, from `Supervisor.status`. */
export interface SupervisorSummary {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly periodMs: number;
  readonly restartsInWindow: number;
  readonly remainingIntensity: number;
}

export interface SnapshotError {
  readonly code: string;
  readonly message: string;
}

/** One process of the tree: the root supervisor or a child as its supervisor reports it. */
export interface TreeNode {
  /** The child id under its supervisor; null for the root and for dynamic children. */
  readonly id: string | null;
  /** Slash-separated ids from the root (`root/web/db`); a dynamic child's segment is its ref. */
  readonly path: string;
  readonly ref: string | null;
  readonly type: ChildType;
  /** The child lifecycle state; the root is `running` while alive, else `stopped`. */
  readonly state: LifecycleState;
  readonly restart: RestartType | null;
  /** Times restarted by its supervisor (0 for the root). */
  readonly restartCount: number;
  /** Null when the process is not alive (stopped, backoff, fatal). */
  readonly process: ProcessSummary | null;
  /** Present for supervisors that answered `Supervisor.status`. */
  readonly supervisor?: SupervisorSummary;
  /** Present for supervisors that were walked; in start order. */
  readonly children?: readonly TreeNode[];
  /** Children left out because the snapshot reached its byte cap. */
  readonly childrenOmitted?: number;
  /** A snapshot provider described this process: its entry is in `sections[section]`. */
  readonly section?: string;
  /** Why this node is incomplete (a timeout, or a supervisor behaviour the admin cannot read). */
  readonly error?: SnapshotError;
}

/** One process described by a snapshot provider. */
export interface SectionEntry {
  readonly path: string;
  readonly ref: string;
  readonly value?: unknown;
  readonly error?: SnapshotError;
}

export interface TreeSnapshot {
  readonly node: string;
  readonly takenAt: string;
  /** Null when the node has no root supervisor yet. */
  readonly root: TreeNode | null;
  /** Entries from snapshot providers, by section (`programs`, …). */
  readonly sections: Readonly<Record<string, readonly SectionEntry[]>>;
  /** True when the byte cap left something out: see `childrenOmitted` and `omitted`. */
  readonly truncated: boolean;
  /** Children known to be left out (supervisors not walked at all are not counted). */
  readonly omitted: number;
  /** Nodes and section entries that carry an `error`. */
  readonly errors: number;
  readonly maxBytes: number;
}

export interface TreeSnapshotOptions {
  readonly runtime: ActorRuntime;
  readonly root: Ref | undefined;
  readonly providers: ReadonlyMap<string, SnapshotProvider>;
  readonly maxBytes: number;
  /** Per supervisor or provider call. */
  readonly callTimeoutMs: number;
  /** For the whole walk; supervisors not reached by then carry a timeout error. */
  readonly timeoutMs: number;
}

type Draft = { -readonly [K in keyof TreeNode]: TreeNode[K] };
type SectionDraft = { -readonly [K in keyof SectionEntry]: SectionEntry[K] };

interface PendingSupervisor {
  readonly node: Draft;
  readonly ref: Ref;
  readonly depth: number;
}

/**
 * Walks the live tree breadth first, only through public APIs: `Supervisor.status` for
 * supervisors, `ActorRuntime.info` for every process, and snapshot providers for the rest.
 * Breadth first, so that a snapshot cut by its byte cap still shows the upper levels whole.
 */
export async function takeTreeSnapshot(options: TreeSnapshotOptions): Promise<TreeSnapshot> {
  return new TreeWalk(options).run();
}

class TreeWalk {
  readonly #options: TreeSnapshotOptions;
  readonly #budget: ByteBudget;
  readonly #deadline: number;
  readonly #sections: Record<string, SectionDraft[]> = {};
  readonly #pending: PendingSupervisor[] = [];
  #omitted = 0;
  #errors = 0;

  constructor(options: TreeSnapshotOptions) {
    this.#options = options;
    this.#budget = new ByteBudget(options.maxBytes);
    this.#deadline = Date.now() + options.timeoutMs;
  }

  async run(): Promise<TreeSnapshot> {
    const { runtime, root } = this.#options;
    let rootNode: Draft | null = null;
    if (root !== undefined) {
      const info = runtime.info(root);
      rootNode = {
        id: null,
        path: 'root',
        ref: String(root),
        type: 'supervisor',
        state: info === undefined ? 'stopped' : 'running',
        restart: null,
        restartCount: 0,
        process: summarize(info),
      };
      this.#budget.take(rootNode);
      if (info !== undefined) await this.#visit(rootNode, root, info, 0);
    }
    // An index, not shift(): a level of 100,000 supervisors must not cost O(n²).
    for (let next = 0; next < this.#pending.length; next++) {
      if (this.#budget.exhausted) break;
      await this.#walkSupervisor(this.#pending[next]!);
    }
    return {
      node: runtime.node,
      takenAt: new Date().toISOString(),
      root: rootNode,
      sections: this.#sections,
      truncated: this.#budget.exhausted,
      omitted: this.#omitted,
      errors: this.#errors,
      maxBytes: this.#options.maxBytes,
    };
  }

  /** Decides how a live process is read: by a provider, as a supervisor, or not at all (a worker). */
  async #visit(node: Draft, ref: Ref, info: ProcessInfo, depth: number): Promise<void> {
    const provider = this.#options.providers.get(info.behaviour);
    if (provider !== undefined) {
      await this.#describe(provider, node, ref);
      if (provider.descend !== true) return;
    } else if (node.type !== 'supervisor') {
      return;
    } else if (info.behaviour !== SUPERVISOR_BEHAVIOUR) {
      // Asking an unknown process the supervisor protocol could crash it: say so instead.
      this.#fail(node, {
        code: AdminErrorCode.SnapshotFailed,
        message: `type 'supervisor' but behaviour '${info.behaviour}' answers no Supervisor.status and has no snapshot provider`,
      });
      return;
    }
    if (depth >= MAX_TREE_DEPTH) {
      this.#fail(node, { code: AdminErrorCode.SnapshotFailed, message: `deeper than ${MAX_TREE_DEPTH} levels; not walked` });
      return;
    }
    this.#pending.push({ node, ref, depth });
  }

  async #walkSupervisor({ node, ref, depth }: PendingSupervisor): Promise<void> {
    let status: SupervisorStatus;
    try {
      status = await this.#bounded(Supervisor.status(this.#options.runtime, ref), String(ref));
    } catch (error) {
      this.#fail(node, toSnapshotError(error));
      return;
    }
    const summary: SupervisorSummary = {
      strategy: status.strategy,
      intensity: status.intensity,
      periodMs: status.periodMs,
      restartsInWindow: status.restartsInWindow,
      remainingIntensity: status.remainingIntensity,
    };
    if (!this.#budget.take(summary)) return;
    node.supervisor = summary;
    const children: TreeNode[] = [];
    node.children = children;
    const total = status.children.length;
    for (let index = 0; index < total; index++) {
      const child = status.children[index]!;
      const info = child.ref === undefined ? undefined : this.#options.runtime.info(child.ref);
      const childNode = childDraft(node.path, child, info);
      if (!this.#budget.take(childNode)) {
        node.childrenOmitted = total - index;
        this.#omitted += total - index;
        return;
      }
      children.push(childNode);
      if (child.ref !== undefined && info !== undefined) await this.#visit(childNode, child.ref, info, depth + 1);
    }
  }

  async #describe(provider: SnapshotProvider, node: Draft, ref: Ref): Promise<void> {
    const entry: SectionDraft = { path: node.path, ref: String(ref) };
    try {
      entry.value = await this.#bounded(Promise.resolve(provider.describe(this.#options.runtime, ref)), `${provider.behaviour} ${ref}`);
    } catch (error) {
      entry.error = toSnapshotError(error);
      this.#errors++;
    }
    if (!this.#budget.take(entry)) return;
    node.section = provider.section;
    (this.#sections[provider.section] ??= []).push(entry);
  }

  #fail(node: Draft, error: SnapshotError): void {
    this.#errors++;
    // An error is small; it is recorded even when the budget is spent, so no failure is silent.
    this.#budget.take(error);
    node.error = error;
  }

  /** `work`, or a SnapshotTimeout after the call timeout or the walk's deadline, whichever is sooner. */
  async #bounded<T>(work: Promise<T>, target: string): Promise<T> {
    const timeoutMs = Math.max(0, Math.min(this.#options.callTimeoutMs, this.#deadline - Date.now()));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SnapshotTimeout(target, timeoutMs)), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function childDraft(parentPath: string, child: ChildStatus, info: ProcessInfo | undefined): Draft {
  const ref = child.ref === undefined ? null : String(child.ref);
  const segment = child.id ?? ref ?? '?';
  return {
    id: child.id ?? null,
    path: `${parentPath}/${segment}`,
    ref,
    type: child.type,
    state: child.state,
    restart: child.restart,
    restartCount: child.restartCount,
    process: summarize(info),
  };
}

export function summarize(info: ProcessInfo | undefined): ProcessSummary | null {
  if (info === undefined) return null;
  return {
    name: info.name ?? null,
    behaviour: info.behaviour,
    status: info.status,
    mailboxLength: info.mailboxLength,
    mailboxCapacity: info.mailboxCapacity,
    messagesHandled: info.messagesHandled,
    messagesDropped: info.messagesDropped,
  };
}

function toSnapshotError(error: unknown): SnapshotError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : AdminErrorCode.SnapshotFailed, message: error.message };
  }
  return { code: AdminErrorCode.SnapshotFailed, message: String(error) };
}

/**
 * The discovery actor: every `intervalMs` it asks its strategy who is in the cluster, connects the
 * nodes that appeared (the node then keeps them connected, with its own backoff) and lets go of the
 * ones that vanished (no more reconnect attempts to an instance that was scaled down or killed).
 * It manages only the names it found itself. A failed round is logged and retried next round;
 * `maxFailures` in a row crash the actor, for its supervisor to restart by its rules.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { GenServer, worker, type ChildSpec } from '../../behaviours/index.js';
import { InvalidNodeOption } from '../errors.js';
import { parseNodeName } from '../names.js';
import type { Node } from '../node.js';
import type { DiscoveryStrategy } from './strategy.js';

export interface DiscoveryOptions {
  readonly strategy: DiscoveryStrategy;
  /** Between rounds (default 5,000 ms; 100..600,000). */
  readonly intervalMs?: number;
  /** Nodes this actor keeps connected at most (default 1,024; ceiling 16,384); more found are counted, not dialled. */
  readonly maxNodes?: number;
  /** Failed rounds in a row before the actor crashes (default 10; 1..1,000). */
  readonly maxFailures?: number;
}

export interface DiscoveryStatus {
  readonly strategy: string;
  readonly rounds: number;
  readonly failures: number;
  /** Names found in the last round beyond `maxNodes`, or not valid node names. */
  readonly refused: number;
  /** The nodes this actor found and keeps connected, sorted. */
  readonly nodes: readonly string[];
  readonly lastError: string | undefined;
}

export const DISCOVERY_CAPS = { maxNodes: 16_384 } as const;
const KNOWN: readonly (keyof DiscoveryOptions)[] = ['strategy', 'intervalMs', 'maxNodes', 'maxFailures'];
const TICK = 'discovery.tick';

interface ResolvedDiscovery {
  readonly strategy: DiscoveryStrategy;
  readonly intervalMs: number;
  readonly maxNodes: number;
  readonly maxFailures: number;
}

function integer(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved < min || resolved > max) throw new InvalidNodeOption(`discovery.${option}`, `must be an integer in ${min}..${max}`);
  return resolved;
}

function resolveDiscovery(options: DiscoveryOptions): ResolvedDiscovery {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new InvalidNodeOption(`discovery.${unknown.key}`, unknown.detail);
  if (typeof options.strategy?.list !== 'function') throw new InvalidNodeOption('discovery.strategy', 'must be a strategy (staticNodes, dnsNodes, postgresRegistry)');
  return {
    strategy: options.strategy,
    intervalMs: integer('intervalMs', options.intervalMs, 5_000, 100, 600_000),
    maxNodes: integer('maxNodes', options.maxNodes, 1_024, 1, DISCOVERY_CAPS.maxNodes),
    maxFailures: integer('maxFailures', options.maxFailures, 10, 1, 1_000),
  };
}

export class DiscoveryServer extends GenServer<'status', DiscoveryStatus, never, typeof TICK> {
  readonly #found = new Set<string>();
  #rounds = 0;
  #failures = 0;
  #refused = 0;
  #lastError: string | undefined;

  constructor(
    private readonly node: Node,
    private readonly config: ResolvedDiscovery,
  ) {
    super();
  }

  override init(): void {
    this.ctx.sendAfter(0, TICK);
  }

  override handleCall(): DiscoveryStatus {
    return {
      strategy: this.config.strategy.kind,
      rounds: this.#rounds,
      failures: this.#failures,
      refused: this.#refused,
      nodes: [...this.#found].sort(),
      lastError: this.#lastError,
    };
  }

  override async handleInfo(message: typeof TICK): Promise<void> {
    if (message !== TICK) return;
    try {
      await this.#round();
      this.#failures = 0;
      this.#lastError = undefined;
    } catch (error) {
      this.#failures++;
      this.#lastError = error instanceof Error ? error.message : String(error);
      this.ctx.log.warn({ event: 'node.discovery_failed', strategy: this.config.strategy.kind, failures: this.#failures, err: error }, 'node discovery round failed');
      if (this.#failures >= this.config.maxFailures) throw error;
    }
    this.ctx.sendAfter(this.config.intervalMs, TICK);
  }

  override async terminate(): Promise<void> {
    // Leave the registry now rather than at expiry; a failure here only delays that until the TTL.
    await this.config.strategy.withdraw?.(this.node.name).catch(() => undefined);
  }

  async #round(): Promise<void> {
    const { strategy, maxNodes } = this.config;
    const self = this.node.name;
    await strategy.announce?.(self);
    const listed = await strategy.list();
    this.#rounds++;
    const now = new Set<string>();
    let refused = 0;
    for (const name of listed) {
      if (name === self || now.has(name)) continue;
      if (now.size >= maxNodes || !validName(name)) {
        refused++;
        continue;
      }
      now.add(name);
    }
    this.#refused = refused;
    for (const name of now) {
      if (this.#found.has(name)) continue;
      this.#found.add(name);
      this.ctx.log.info({ event: 'node.discovered', node: name, strategy: strategy.kind }, 'node discovered');
      // The node keeps trying with its own backoff; the first attempt's failure is not this round's.
      this.node.connect(name).catch(() => undefined);
    }
    for (const name of this.#found) {
      if (now.has(name)) continue;
      this.#found.delete(name);
      this.ctx.log.info({ event: 'node.undiscovered', node: name, strategy: strategy.kind }, 'node left discovery');
      this.node.disconnect(name);
    }
  }
}

function validName(name: string): boolean {
  try {
    parseNodeName(name);
    return true;
  } catch {
    return false;
  }
}

export const Discovery = {
  /** Starts discovery on `node`'s own system, unsupervised (prefer `child` under the app's tree). */
  start(node: Node, options: DiscoveryOptions, start: { readonly name?: string } = {}): Promise<Ref> {
    const config = resolveDiscovery(options);
    return GenServer.start(node.system, () => new DiscoveryServer(node, config), start);
  },
  /** A supervisor child spec for the discovery actor (permanent by default; it traps exits to withdraw at shutdown). */
  child(id: string, node: Node, options: DiscoveryOptions, spec: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec {
    const config = resolveDiscovery(options);
    return worker(id, () => new DiscoveryServer(node, config), { ...spec, server: { trapExit: true } });
  },
  status(system: ActorRuntime, ref: Ref, timeoutMs?: number): Promise<DiscoveryStatus> {
    return GenServer.call<DiscoveryServer>(system, ref, 'status', timeoutMs);
  },
};

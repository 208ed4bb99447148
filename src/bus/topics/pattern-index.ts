/**
 * Patterns indexed as a trie over segments, so matching a channel walks only the branches that can
 * match it (its own segment, and `*`) instead of testing every pattern: the cost of a publish grows
 * with the channel's depth and the patterns that do match, not with how many patterns exist.
 */
import { SEGMENT_SEPARATOR, WILDCARD } from './channel.js';

class PatternNode<V> {
  /** Children by literal segment; created on first use. */
  children: Map<string, PatternNode<V>> | null = null;
  wildcard: PatternNode<V> | null = null;
  /** The value of the pattern that ends here. */
  value: V | undefined = undefined;

  constructor(
    readonly parent: PatternNode<V> | null,
    readonly segment: string,
  ) {}

  get isEmpty(): boolean {
    return this.value === undefined && this.wildcard === null && (this.children === null || this.children.size === 0);
  }
}

/** A map from pattern to value, answering "which values' patterns match this channel". */
export class PatternIndex<V> {
  readonly #root = new PatternNode<V>(null, '');
  readonly #nodes = new Map<string, PatternNode<V>>();

  /** Patterns held. */
  get size(): number {
    return this.#nodes.size;
  }

  get(pattern: string): V | undefined {
    return this.#nodes.get(pattern)?.value;
  }

  /** Sets the value of `pattern` (already checked, split into `segments`). */
  set(pattern: string, segments: readonly string[], value: V): void {
    let node = this.#root;
    for (const segment of segments) {
      if (segment === WILDCARD) {
        node = node.wildcard ??= new PatternNode(node, segment);
      } else {
        const children = (node.children ??= new Map());
        let child = children.get(segment);
        if (child === undefined) children.set(segment, (child = new PatternNode(node, segment)));
        node = child;
      }
    }
    node.value = value;
    this.#nodes.set(pattern, node);
  }

  /** Removes `pattern`, pruning the branches it leaves empty. */
  delete(pattern: string): boolean {
    const node = this.#nodes.get(pattern);
    if (node === undefined) return false;
    this.#nodes.delete(pattern);
    node.value = undefined;
    let current: PatternNode<V> = node;
    while (current.parent !== null && current.isEmpty) {
      const parent: PatternNode<V> = current.parent;
      if (parent.wildcard === current) parent.wildcard = null;
      else parent.children?.delete(current.segment);
      current = parent;
    }
    return true;
  }

  /** Appends to `out` the value of every pattern that matches `channel`. */
  match(channel: string, out: V[]): void {
    if (this.#nodes.size === 0) return;
    walk(this.#root, channel.split(SEGMENT_SEPARATOR), 0, out);
  }
}

function walk<V>(node: PatternNode<V>, segments: readonly string[], depth: number, out: V[]): void {
  if (depth === segments.length) {
    if (node.value !== undefined) out.push(node.value);
    return;
  }
  const literal = node.children?.get(segments[depth]!);
  if (literal !== undefined) walk(literal, segments, depth + 1, out);
  if (node.wildcard !== null) walk(node.wildcard, segments, depth + 1, out);
}

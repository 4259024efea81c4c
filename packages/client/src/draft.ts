/** A key on the path from a request's root to one of its nodes. */
export type PathKey = string | number;

/**
 * Copy-on-write edits of a plain JSON tree: only the nodes on an edited path
 * are copied (once); every other node stays the same object, so what was not
 * edited serialises exactly as before.
 */
export class Draft {
  root: unknown;
  readonly #owned = new WeakSet<object>();

  constructor(root: unknown) {
    this.root = root;
  }

  #own<T>(node: T): T {
    if (node === null || typeof node !== 'object' || this.#owned.has(node)) return node;
    const copy = (Array.isArray(node) ? [...node] : { ...node }) as T & object;
    this.#owned.add(copy);
    return copy;
  }

  /** Replaces the node at `path` by `fn(node)`, copying its ancestors first. */
  update(path: PathKey[], fn: (node: unknown) => unknown): void {
    if (path.length === 0) {
      this.root = fn(this.root);
      return;
    }
    this.root = this.#own(this.root);
    let node = this.root as Record<PathKey, unknown>;
    for (const key of path.slice(0, -1)) {
      node[key] = this.#own(node[key]);
      node = node[key] as Record<PathKey, unknown>;
    }
    const last = path[path.length - 1]!;
    node[last] = fn(node[last]);
  }
}

/**
 * Names cluster rules in the shared store. A rule's key must be the same in every instance
 * running that rule without any coordination, so it is derived from what the rule counts
 * (kind, resource, behaviour, origin), not from its threshold: instances rolling out a new
 * threshold still share one count. Two rules of one resource that count the same thing are
 * told apart by their order (`#0`, `#1`).
 */
export class ClusterKeys {
  private readonly seen = new Map<string, number>();

  /** The key of the next rule with this identity. */
  next(kind: string, resource: string, ...parts: readonly string[]): string {
    const identity = [kind, resource, ...parts].join('|');
    const nth = this.seen.get(identity) ?? 0;
    this.seen.set(identity, nth + 1);
    return `${identity}#${nth}`;
  }
}

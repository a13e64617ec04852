import { StatisticNode } from '../stat/statistic-node';
import type { ResourceRules } from './resource-rules';

/** Most origins whose statistics are kept per resource (oldest dropped first). */
export const MAX_ORIGINS_PER_RESOURCE = 1000;

/** @internal One tracked resource: its statistics, per-origin statistics and rules. */
export class ResourceState {
  readonly node = new StatisticNode();
  private origins: Map<string, StatisticNode> | undefined;

  constructor(
    readonly name: string,
    public rules: ResourceRules,
  ) {}

  /** The statistics of `origin` on this resource, made on first use; bounded in number. */
  originNode(origin: string): StatisticNode {
    const origins = (this.origins ??= new Map());
    let node = origins.get(origin);
    if (node === undefined) {
      if (origins.size >= MAX_ORIGINS_PER_RESOURCE) origins.delete(origins.keys().next().value!);
      node = new StatisticNode();
      origins.set(origin, node);
    }
    return node;
  }
}
